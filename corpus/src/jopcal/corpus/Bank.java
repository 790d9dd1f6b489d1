package jopcal.corpus;

import java.util.Hashtable;
import java.util.Vector;

/** Accounts in a Hashtable, transfers that fail with an exception of their own, synchronized books, receipts in a StringBuffer. */
public class Bank {
    static class Refused extends Exception {
        final int code;
        Refused(String why, int code) { super(why); this.code = code; }
    }
    static class Account {
        final String name;
        int balance;
        Account(String name, int balance) { this.name = name; this.balance = balance; }
        synchronized void withdraw(int amount) throws Refused {
            if (amount > balance) throw new Refused("funds", amount - balance);
            balance -= amount;
        }
        synchronized void deposit(int amount) { balance += amount; }
    }

    private final Hashtable accounts = new Hashtable();
    private final Vector log = new Vector();
    private int refused;

    void open(String name, int balance) { accounts.put(name, new Account(name, balance)); }

    void transfer(String from, String to, int amount) throws Refused {
        Account a = (Account) accounts.get(from);
        Account b = (Account) accounts.get(to);
        if (a == null || b == null) throw new Refused("unknown", 0);
        a.withdraw(amount);
        b.deposit(amount);
    }

    String receipt(String from, String to, int amount) {
        StringBuffer sb = new StringBuffer();
        sb.append(from).append("->").append(to).append(':').append(amount);
        return sb.toString();
    }

    public static void main(String[] args) {
        Bank bank = new Bank();
        String[] names = { "ann", "bob", "cyd", "dee", "eve" };
        for (int i = 0; i < names.length; i++) bank.open(names[i], 100 + 50 * i);
        int chars = 0;
        for (int i = 0; i < 300; i++) {
            String from = names[i % 5];
            String to = i % 17 == 0 ? "zed" : names[(i * 3 + 1) % 5];
            int amount = (i * 37) % 160;
            try {
                bank.transfer(from, to, amount);
                String r = bank.receipt(from, to, amount);
                chars += r.length();
                if (bank.log.size() > 8) bank.log.removeElementAt(0);
                bank.log.addElement(r);
            } catch (Refused e) {
                bank.refused++;
                chars += e.code;
            }
        }
        int total = 0;
        for (int i = 0; i < names.length; i++) total += ((Account) bank.accounts.get(names[i])).balance;
        System.out.println("total " + total + " refused " + bank.refused + " chars " + chars + " last " + bank.log.lastElement());
    }
}
