-- jopcal's reader for the microcode assembler's .dat files (one signed
-- decimal word per line), called while GHDL elaborates so that the ROM and
-- the stack RAM carry their contents as initial values in the netlist.
library std;
use std.textio.all;
library ieee;
use ieee.std_logic_1164.all;
use ieee.numeric_std.all;

package jopcal_dat is
    type words is array (natural range <>) of std_logic_vector;
    -- `count` words of `width` bits from `name`; words past its end are 0.
    impure function read_dat(name : string; count : natural; width : natural) return words;
end package jopcal_dat;

package body jopcal_dat is
    impure function read_dat(name : string; count : natural; width : natural) return words is
        file f : text open read_mode is name;
        variable l : line;
        variable v : integer;
        variable w : words(0 to count-1)(width-1 downto 0) := (others => (others => '0'));
    begin
        for i in w'range loop
            exit when endfile(f);
            readline(f, l);
            read(l, v);
            w(i) := std_logic_vector(to_signed(v, width));
        end loop;
        return w;
    end function;
end package body jopcal_dat;
