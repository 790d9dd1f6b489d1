//! The board's runtime library: the few `java.lang`/`java.io` classes the
//! suite uses, as synthetic classes. `Object.<init>` is real bytecode (a single
//! `return`, as in any JDK), so its cost and cache behaviour are those of a
//! method of one byte; everything else is an intrinsic that costs nothing
//! (they run outside the measured region: printing, exceptions, exit).
//! `com.jopdesign.sys.Native.rd/wr` are JOP's own bytecodes: I/O reads and
//! writes costed `jopsys_rd`/`jopsys_wr`; `rd(IO_CNT)` is the cycle counter.

use super::{EmuError, Exit, MethodId, Obj, Vm};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intrinsic {
    ThrowableInit,
    ThrowableInitMessage,
    PrintChar,
    PrintString,
    PrintInt,
    Println,
    PrintlnString,
    PrintlnInt,
    StringLength,
    StringCharAt,
    SystemExit,
    NanoTime,
    CurrentTimeMillis,
    /// `Runtime.getRuntime()`: a fresh `Runtime` object (it holds nothing).
    RuntimeGetRuntime,
    /// `Runtime.availableProcessors()`: the board has one CPU.
    AvailableProcessors,
    /// `Thread.<init>(Runnable)`: the thread is never started on one CPU.
    ThreadInitTarget,
    NativeRd,
    NativeWr,
    UnsupportedNative,
}

pub enum Outcome {
    Done,
    Throw(&'static str),
    Exit(Exit),
}

const CLASSES: [(&str, Option<&str>); 19] = [
    ("java/lang/Object", None),
    ("java/lang/String", Some("java/lang/Object")),
    ("java/lang/System", Some("java/lang/Object")),
    ("java/io/PrintStream", Some("java/lang/Object")),
    ("com/jopdesign/sys/Native", Some("java/lang/Object")),
    ("java/lang/Throwable", Some("java/lang/Object")),
    ("java/lang/Exception", Some("java/lang/Throwable")),
    ("java/lang/Error", Some("java/lang/Throwable")),
    ("java/lang/RuntimeException", Some("java/lang/Exception")),
    ("java/lang/ArithmeticException", Some("java/lang/RuntimeException")),
    ("java/lang/NullPointerException", Some("java/lang/RuntimeException")),
    (
        "java/lang/IndexOutOfBoundsException",
        Some("java/lang/RuntimeException"),
    ),
    (
        "java/lang/ArrayIndexOutOfBoundsException",
        Some("java/lang/IndexOutOfBoundsException"),
    ),
    (
        "java/lang/NegativeArraySizeException",
        Some("java/lang/RuntimeException"),
    ),
    ("java/lang/ClassCastException", Some("java/lang/RuntimeException")),
    ("java/lang/IllegalArgumentException", Some("java/lang/RuntimeException")),
    ("java/lang/IllegalStateException", Some("java/lang/RuntimeException")),
    (
        "java/lang/UnsupportedOperationException",
        Some("java/lang/RuntimeException"),
    ),
    ("java/lang/OutOfMemoryError", Some("java/lang/Error")),
];

/// Classes of one CPU's runtime that JemBench's executors load even when they
/// never start a thread: `Thread` (a superclass of their workers), `Runnable`,
/// `Runtime` (asked for the number of processors: one) and `Class` (the
/// object a `synchronized (X.class)` locks).
const SINGLE_CPU: [&str; 4] = [
    "java/lang/Runnable",
    "java/lang/Thread",
    "java/lang/Runtime",
    "java/lang/Class",
];

/// True for the classes the board provides itself.
pub fn is_library(name: &str) -> bool {
    CLASSES.iter().any(|(n, _)| *n == name) || SINGLE_CPU.contains(&name)
}

pub fn install(vm: &mut Vm) -> Result<(), EmuError> {
    for (name, sup) in CLASSES {
        let s = sup.map(|s| vm.class_id(s).expect("listed before"));
        vm.add_class(name, s, Vec::new(), Vec::new());
    }
    let id = |vm: &Vm, n: &str| vm.class_id(n).expect("library class");
    let object = id(vm, "java/lang/Object");
    for name in SINGLE_CPU {
        vm.add_class(name, Some(object), Vec::new(), Vec::new());
    }
    let runnable = id(vm, "java/lang/Runnable");
    let thread = id(vm, "java/lang/Thread");
    vm.set_interfaces(thread, vec![runnable]);
    // Runnable.run() is abstract: calls go to the receiver's own run().
    let run = vm.add_method(runnable, "run", "()V", false, 0, 0);
    vm.methods[run as usize].is_abstract = true;
    // Thread.<init>() does what Object.<init>() does: return.
    let thread_init = vm.add_method(thread, "<init>", "()V", false, 1, 1);
    vm.set_raw_code(thread_init, &[0xb1])?;
    // Object.<init> is a one-byte method: `return`.
    let init = vm.add_method(object, "<init>", "()V", false, 1, 1);
    vm.set_raw_code(init, &[0xb1])?;
    let throwable = id(vm, "java/lang/Throwable");
    vm.add_field(throwable, "detailMessage", "Ljava/lang/String;", false);
    let intrinsic = |vm: &mut Vm, class: &str, name: &str, desc: &str, is_static: bool, i: Intrinsic| {
        let c = id(vm, class);
        let m = vm.add_method(c, name, desc, is_static, 0, 0);
        vm.methods[m as usize].intrinsic = Some(i);
    };
    for (name, _) in CLASSES.iter().skip(5) {
        intrinsic(vm, name, "<init>", "()V", false, Intrinsic::ThrowableInit);
        intrinsic(
            vm,
            name,
            "<init>",
            "(Ljava/lang/String;)V",
            false,
            Intrinsic::ThrowableInitMessage,
        );
    }
    let ps = "java/io/PrintStream";
    intrinsic(vm, ps, "print", "(C)V", false, Intrinsic::PrintChar);
    intrinsic(vm, ps, "print", "(Ljava/lang/String;)V", false, Intrinsic::PrintString);
    intrinsic(vm, ps, "print", "(I)V", false, Intrinsic::PrintInt);
    intrinsic(vm, ps, "println", "()V", false, Intrinsic::Println);
    intrinsic(
        vm,
        ps,
        "println",
        "(Ljava/lang/String;)V",
        false,
        Intrinsic::PrintlnString,
    );
    intrinsic(vm, ps, "println", "(I)V", false, Intrinsic::PrintlnInt);
    intrinsic(vm, "java/lang/String", "length", "()I", false, Intrinsic::StringLength);
    intrinsic(vm, "java/lang/String", "charAt", "(I)C", false, Intrinsic::StringCharAt);
    intrinsic(vm, "java/lang/System", "exit", "(I)V", true, Intrinsic::SystemExit);
    intrinsic(vm, "java/lang/System", "nanoTime", "()J", true, Intrinsic::NanoTime);
    intrinsic(
        vm,
        "java/lang/System",
        "currentTimeMillis",
        "()J",
        true,
        Intrinsic::CurrentTimeMillis,
    );
    intrinsic(
        vm,
        "java/lang/Runtime",
        "getRuntime",
        "()Ljava/lang/Runtime;",
        true,
        Intrinsic::RuntimeGetRuntime,
    );
    intrinsic(
        vm,
        "java/lang/Runtime",
        "availableProcessors",
        "()I",
        false,
        Intrinsic::AvailableProcessors,
    );
    intrinsic(
        vm,
        "java/lang/Thread",
        "<init>",
        "(Ljava/lang/Runnable;)V",
        false,
        Intrinsic::ThreadInitTarget,
    );
    intrinsic(vm, "com/jopdesign/sys/Native", "rd", "(I)I", true, Intrinsic::NativeRd);
    intrinsic(vm, "com/jopdesign/sys/Native", "wr", "(II)V", true, Intrinsic::NativeWr);
    Ok(())
}

/// Runs an intrinsic: pops its arguments (receiver included) and pushes its result.
pub fn call(vm: &mut Vm, i: Intrinsic, target: MethodId, caller: MethodId, at: u32) -> Result<Outcome, EmuError> {
    let text = |vm: &Vm, r: i32| vm.string_of(r);
    match i {
        Intrinsic::ThrowableInit => {
            vm.pop_arg();
        }
        Intrinsic::ThrowableInitMessage => {
            vm.pop_arg();
            vm.pop_arg();
        }
        Intrinsic::PrintChar => {
            let c = vm.pop_arg();
            vm.pop_arg();
            let ch = char::from_u32(c as u32 & 0xffff).unwrap_or('?');
            let mut buf = [0u8; 4];
            vm.print_bytes(ch.encode_utf8(&mut buf).as_bytes());
        }
        Intrinsic::PrintString | Intrinsic::PrintlnString => {
            let r = vm.pop_arg();
            vm.pop_arg();
            let mut s = if r == 0 {
                "null".to_string()
            } else {
                text(vm, r).unwrap_or_default()
            };
            if i == Intrinsic::PrintlnString {
                s.push('\n');
            }
            vm.print_bytes(s.as_bytes());
        }
        Intrinsic::PrintInt | Intrinsic::PrintlnInt => {
            let v = vm.pop_arg();
            vm.pop_arg();
            let mut s = v.to_string();
            if i == Intrinsic::PrintlnInt {
                s.push('\n');
            }
            vm.print_bytes(s.as_bytes());
        }
        Intrinsic::Println => {
            vm.pop_arg();
            vm.print_bytes(b"\n");
        }
        Intrinsic::StringLength => {
            let r = vm.pop_arg();
            let Some(Obj::Str(u)) = vm.obj(r) else {
                return Ok(Outcome::Throw("java/lang/NullPointerException"));
            };
            let n = u.len() as i32;
            vm.push(n);
        }
        Intrinsic::StringCharAt => {
            let k = vm.pop_arg();
            let r = vm.pop_arg();
            let Some(Obj::Str(u)) = vm.obj(r) else {
                return Ok(Outcome::Throw("java/lang/NullPointerException"));
            };
            match u.get(k as usize) {
                Some(c) if k >= 0 => {
                    let c = i32::from(*c);
                    vm.push(c);
                }
                _ => return Ok(Outcome::Throw("java/lang/IndexOutOfBoundsException")),
            }
        }
        Intrinsic::SystemExit => {
            let status = vm.pop_arg();
            vm.set_exit(Exit::Exit(status));
            return Ok(Outcome::Exit(Exit::Exit(status)));
        }
        Intrinsic::NanoTime => {
            let ns = (vm.cycles as f64 * 1000.0 / vm.config().clock_mhz) as i64;
            vm.push_long(ns);
        }
        Intrinsic::CurrentTimeMillis => {
            let ms = (vm.cycles as f64 / 1000.0 / vm.config().clock_mhz) as i64;
            vm.push_long(ms);
        }
        Intrinsic::RuntimeGetRuntime => {
            let class = vm.class_id("java/lang/Runtime").expect("library");
            let r = vm.alloc(Obj::Inst {
                class,
                fields: Box::new([]),
            })?;
            vm.push(r);
        }
        Intrinsic::AvailableProcessors => {
            vm.pop_arg();
            vm.push(1);
        }
        Intrinsic::ThreadInitTarget => {
            vm.pop_arg();
            vm.pop_arg();
        }
        Intrinsic::NativeRd => {
            let addr = vm.pop_arg();
            // The counter is sampled as jopsys_rd starts.
            let v = vm.io_read(addr);
            vm.cycles += u64::from(vm.native_costs().0);
            vm.push(v);
        }
        Intrinsic::NativeWr => {
            let _addr = vm.pop_arg();
            let _value = vm.pop_arg();
            vm.cycles += u64::from(vm.native_costs().1);
        }
        Intrinsic::UnsupportedNative => {
            return Err(EmuError::Unsupported {
                at: vm.location(caller, at),
                what: format!(
                    "native method {} is not supported by the virtual board",
                    vm.method_name(target)
                ),
            });
        }
    }
    Ok(Outcome::Done)
}
