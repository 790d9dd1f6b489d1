//! jopcal's single-step profiler: a JVMTI agent (loaded with `-agentpath`)
//! that records an exact calling-context profile of one region of a Java
//! program, one bytecode at a time. It is the oracle the instrumenting
//! profiler (crate `jopcal-profiler`) is checked against.
//!
//! Owns: the JVMTI glue below; the calling-context tree it grows is
//! `jopcal_profiler::tree`. The profile it writes is
//! `jopcal_profile::Profile` in the versioned `.jopprof` format; its options
//! are `jopcal_profile::agent_options`.
//!
//! How it counts. From the entry of the program's `main` (or, without a main
//! class, from the preparation of the harness class) the calls and returns of
//! the main thread are *tracked*: they build the tree and the call/return
//! stream, but count nothing, so that an offline method-cache replay starts
//! from the state a board is in when the region begins (the profile's
//! `region_start` marks where the counted part of the stream begins). The
//! region opens when `Harness.start()` returns (a breakpoint at its entry asks
//! for its frame pop) or when `main` is entered (`--region main`); from then
//! on every thread is counted. Each thread keeps a shadow stack of (context, method code) frames.
//! A SingleStep reads the exact opcode at its location from the method's own
//! bytecode (GetBytecodes), so `iload_0` and `iload 0`, `ldc` and `ldc_w` stay
//! apart. A MethodEntry is an invoke of the caller's when the caller's last
//! bytecode was an invoke that names the entered method (resolved through
//! GetConstantPool); otherwise the JVM entered the method on its own (a static
//! initializer, class loading, an exception constructor), and the context is
//! recorded with invoke opcode 0. HotSpot hides single steps while it resolves
//! a constant (so the bytecodes of class loading and of static initializers
//! run from there produce no SingleStep): every method entered by the JVM on
//! its own, and everything below it, gets a breakpoint on each instruction,
//! and those breakpoints count in frames where no SingleStep arrives. The
//! call/return stream is that of the thread
//! that opened the region; other threads' work is counted under the root.
//! Each exception is followed from its Exception event (its class, where it
//! arose) through the frames it leaves to the handler that catches it: the
//! profile's arrivals, with the exception tables of those frames' methods,
//! which the agent reads from the class files as the JVM loads them.
//! The region closes when `Harness.stop()` is entered or `main` returns; the
//! profile is then written (temporary file, then rename). If the JVM dies
//! inside the region the profile is written marked incomplete.

use jopcal_classfile::{opcode::is_invoke, parse_class, parse_constant_pool};
use jopcal_profile::agent_options::{AgentOptions, Region};
use jopcal_profile::{encode, routed, Event, FieldKind, MethodInfo};
use jopcal_profiler::tree::{handler_entries, MethodCode, Tree};
use jvmti_bindings::prelude::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};

/// Everything the threads share, behind one lock.
struct Shared {
    tree: Option<Tree>,
    codes: HashMap<usize, Arc<MethodCode>>,
    /// The region has begun (it is profiled once).
    begun: bool,
    /// The profile has been written.
    done: bool,
    /// Events whose frame did not match the shadow stack (the profile is then incomplete).
    lost_sync: u64,
    /// Methods that have a breakpoint on every instruction.
    breakpointed: std::collections::HashSet<usize>,
}

static SHARED: LazyLock<Mutex<Shared>> = LazyLock::new(|| {
    Mutex::new(Shared {
        tree: None,
        codes: HashMap::new(),
        begun: false,
        done: false,
        lost_sync: 0,
        breakpointed: std::collections::HashSet::new(),
    })
});
static OPTIONS: OnceLock<AgentOptions> = OnceLock::new();
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// The owner thread's calls are being tracked (before and during the region).
static TRACKING: AtomicBool = AtomicBool::new(false);
/// Bumped when the region begins, so threads know their shadow stacks are stale.
static EPOCH: AtomicU64 = AtomicU64::new(0);
/// jmethodIDs of the region's markers (0 until their class is prepared).
static START_ID: AtomicUsize = AtomicUsize::new(0);
static STOP_ID: AtomicUsize = AtomicUsize::new(0);
static MAIN_ID: AtomicUsize = AtomicUsize::new(0);
/// When the region began: its wall time is written with the profile.
static REGION_BEGAN: OnceLock<std::time::Instant> = OnceLock::new();

fn shared() -> MutexGuard<'static, Shared> {
    SHARED.lock().unwrap_or_else(|e| e.into_inner())
}

struct Frame {
    node: u32,
    method: usize,
    code: Arc<MethodCode>,
    /// Bytecode index of an invoke this frame executed whose callee has not been entered yet.
    pending: Option<u32>,
    /// Bytecode index of the last bytecode this frame executed (-1: none yet).
    last: i32,
    /// Entered by the JVM (or below such a frame), where single steps may be
    /// hidden: counted by breakpoints until a single step shows they are not.
    hidden: bool,
    /// The cases the `lookupswitch` this frame is at compares, found from its
    /// key where an `iload` pushed it (read at the switch, used at its target).
    switch_compares: Option<u8>,
    /// A bytecode the agent counted itself, which HotSpot does not report
    /// (see `resumes_where_its_callee_left`): a report of it that still
    /// arrives next is the same bytecode, not another.
    counted_unreported: Option<u32>,
}

#[derive(Default)]
struct ThreadState {
    epoch: u64,
    owner: bool,
    frames: Vec<Frame>,
    /// Monitors this thread holds (entries of `synchronized` blocks and
    /// methods not yet left): JOP's lock count, whose reaching 0 decides
    /// the path of a `monitorexit` (`routed::MONITOREXIT`).
    held: u32,
    /// The exception in flight: its class's ancestry (the class, then its
    /// superclasses) and where it arose in the top frame (the `athrow`, or
    /// the invoke whose callee it left).
    in_flight: Option<(Arc<[String]>, u32)>,
    /// Whether the thread is the program's (in the `main` thread group), not
    /// one of the JVM's own (reference handling, cleaners, signals), whose
    /// work has no counterpart on JOP and depends on the host's timing.
    program: Option<bool>,
}

impl ThreadState {
    /// A monitor left: the exit's class, as JOP's lock count decides its path.
    fn release(&mut self) -> u8 {
        self.held = self.held.saturating_sub(1);
        if self.held == 0 {
            routed::MONITOR_RELEASED
        } else {
            routed::MONITOR_NESTED
        }
    }
}

thread_local! {
    static THREAD: RefCell<ThreadState> = RefCell::new(ThreadState::default());
}

/// The agent; all state is in the statics above because JVMTI callbacks are free functions.
#[derive(Default)]
pub struct Profiler;

fn log(msg: &str) {
    eprintln!("jopcal-agent: {msg}");
}

/// Class name from a type signature: `Ljava/lang/String;` → `java/lang/String`
/// (an array's keeps its descriptor, which names no class).
fn class_name(signature: &str) -> &str {
    signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(signature)
}

/// Exception tables by (class, name, descriptor), read from the class files
/// as the JVM loads them: JVMTI has no call that gives one.
static TABLES: LazyLock<Mutex<HashMap<MethodName, Vec<jopcal_profile::HandlerEntry>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// A method by (class, name, descriptor).
type MethodName = (String, String, String);

/// The exception tables of the class file `bytes`, kept for its methods
/// that have one.
fn keep_tables(bytes: &[u8]) {
    let Ok(cf) = parse_class(bytes) else { return };
    let mut tables = TABLES.lock().unwrap_or_else(|e| e.into_inner());
    for m in &cf.methods {
        if let Some(code) = m.code.as_ref().filter(|c| !c.exception_table.is_empty()) {
            let key = (cf.this_class.clone(), m.name.clone(), m.descriptor.clone());
            tables.insert(key, handler_entries(&code.exception_table, &cf.constant_pool));
        }
    }
}

/// The superclass chain of `object`'s class, its own first (internal names).
fn ancestry(jvmti: &Jvmti, jni: &JniEnv, object: jni::jobject) -> Option<Arc<[String]>> {
    if object.is_null() {
        return None;
    }
    let mut names = Vec::new();
    // SAFETY: `object` and the classes are local references of this callback.
    let mut at = Some(unsafe { jni.get_object_class(object) });
    while let Some(c) = at.filter(|c| !c.is_null()) {
        let (signature, _) = unsafe { jvmti.get_class_signature(c) }.ok()?;
        names.push(class_name(&signature).to_string());
        at = unsafe { jni.get_superclass(c) };
    }
    Some(names.into())
}

/// The code of method `mid`, read once through JVMTI and kept.
fn method_code(jvmti: &Jvmti, mid: jni::jmethodID) -> Option<Arc<MethodCode>> {
    let key = mid as usize;
    if let Some(c) = shared().codes.get(&key) {
        return Some(c.clone());
    }
    // SAFETY: `mid` comes from a JVMTI event or stack trace of the live VM, and
    // the class reference is a local reference valid during this callback.
    let (info, code, pool) = unsafe {
        let class = jvmti.get_method_declaring_class(mid).ok()?;
        let (signature, _) = jvmti.get_class_signature(class).ok()?;
        let (name, descriptor, _) = jvmti.get_method_name(mid).ok()?;
        let native = jvmti.is_method_native(mid).unwrap_or(false);
        // ACC_SYNCHRONIZED
        let synchronized = jvmti.get_method_modifiers(mid).is_ok_and(|m| m & 0x20 != 0);
        let code = if native {
            Vec::new()
        } else {
            jvmti.get_bytecodes(mid).unwrap_or_default()
        };
        // The pool names invoke targets, the fields of field accesses, the
        // classes of type checks and what `new`, `anewarray` and
        // `multianewarray` make (a byte that may be one is enough to fetch it).
        let pool = if code.iter().any(|op| {
            is_invoke(*op)
                || jopcal_profile::model::FIELD_OPCODES.contains(op)
                || routed::TYPE_CHECKS.contains(op)
                || jopcal_profiler::tree::MAKES_A_NAMED_CLASS.contains(op)
        }) {
            jvmti
                .get_constant_pool(class)
                .ok()
                .and_then(|bytes| parse_constant_pool(&bytes).ok())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let info = MethodInfo {
            class: class_name(&signature).to_string(),
            name,
            descriptor,
            bytecode_len: code.len() as u32,
            native,
            synchronized,
        };
        (info, code, pool)
    };
    let mut s = shared();
    if let Some(c) = s.codes.get(&key) {
        return Some(c.clone());
    }
    let index = s.codes.len() as u32;
    let named = (info.class.clone(), info.name.clone(), info.descriptor.clone());
    let handlers = TABLES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&named)
        .cloned()
        .unwrap_or_default();
    let c = Arc::new(MethodCode::new(index, info, code, &pool).with_handlers(handlers));
    s.codes.insert(key, c.clone());
    Some(c)
}

/// Frames of the current thread from `depth` outward, outermost first.
fn stack(jvmti: &Jvmti, depth: i32) -> Vec<(usize, i64)> {
    // SAFETY: a null thread is the current thread, which is running this callback.
    let frames = unsafe { jvmti.get_stack_trace(ptr::null_mut(), depth, 4096) }.unwrap_or_default();
    frames.iter().rev().map(|f| (f.method as usize, f.location)).collect()
}

/// Gives this thread a shadow stack for the current region, built from its
/// real stack (frames from `depth` outward) as contexts under the root that
/// the region did not enter: they get nodes, but no counts.
fn seed(jvmti: &Jvmti, ts: &mut ThreadState, depth: i32) {
    ts.epoch = EPOCH.load(Ordering::Acquire);
    ts.owner = false;
    ts.frames.clear();
    let mut parent: Option<(u32, Arc<MethodCode>, i64)> = None;
    for (mid, location) in stack(jvmti, depth) {
        let Some(code) = method_code(jvmti, mid as jni::jmethodID) else {
            return;
        };
        let mut s = shared();
        let Some(tree) = s.tree.as_mut() else { return };
        let node = match &parent {
            None => tree.child(0, -1, &code, 0),
            Some((p, pcode, loc)) => {
                let at = *loc as u32;
                let op = pcode
                    .opcode_at(at)
                    .filter(|op| is_invoke(*op) && pcode.invoke_enters(at, &code.info))
                    .unwrap_or(0);
                tree.child(*p, *loc as i32, &code, op)
            }
        };
        drop(s);
        ts.frames.push(Frame {
            node,
            method: mid,
            code: code.clone(),
            pending: None,
            last: location as i32,
            hidden: false,
            switch_compares: None,
            counted_unreported: None,
        });
        parent = Some((node, code, location));
    }
}

/// Whether the current thread is in the JVM's `main` thread group (or one
/// below it): a thread of the program's.
fn program_thread(jvmti: &Jvmti) -> bool {
    // SAFETY: a null thread is the current one; the group references are
    // local references valid during this callback.
    unsafe {
        let Ok(info) = jvmti.get_thread_info(ptr::null_mut()) else {
            return true;
        };
        let mut group = info.thread_group;
        while !group.is_null() {
            let Ok(g) = jvmti.get_thread_group_info(group) else {
                return true;
            };
            if g.name.as_deref() == Some("main") {
                return true;
            }
            group = g.parent;
        }
        false
    }
}

/// Makes sure this thread's shadow stack belongs to the current region.
/// Returns false when the region is not active, or the thread is one of
/// the JVM's own.
fn current(jvmti: &Jvmti, ts: &mut ThreadState, depth: i32) -> bool {
    if !ACTIVE.load(Ordering::Acquire) {
        return false;
    }
    if !ts.owner && !*ts.program.get_or_insert_with(|| program_thread(jvmti)) {
        return false;
    }
    if ts.epoch != EPOCH.load(Ordering::Acquire) || ts.frames.is_empty() {
        seed(jvmti, ts, depth);
    }
    !ts.frames.is_empty()
}

/// Events on while the region is open (SingleStep is already on; see
/// [`enable_single_step`]; field modifications where the JVM offers them,
/// see [`watch_reference_fields`]).
const REGION_EVENTS: [jvmti::jvmtiEvent; 4] = [
    jvmti::JVMTI_EVENT_METHOD_ENTRY,
    jvmti::JVMTI_EVENT_METHOD_EXIT,
    jvmti::JVMTI_EVENT_EXCEPTION,
    jvmti::JVMTI_EVENT_EXCEPTION_CATCH,
];

/// Everything the agent turns off when the region closes.
const ALL_EVENTS: [jvmti::jvmtiEvent; 7] = [
    jvmti::JVMTI_EVENT_SINGLE_STEP,
    jvmti::JVMTI_EVENT_METHOD_ENTRY,
    jvmti::JVMTI_EVENT_METHOD_EXIT,
    jvmti::JVMTI_EVENT_EXCEPTION,
    jvmti::JVMTI_EVENT_EXCEPTION_CATCH,
    jvmti::JVMTI_EVENT_BREAKPOINT,
    jvmti::JVMTI_EVENT_FIELD_MODIFICATION,
];

/// Whether the JVM samples every allocation (heap sampling at interval 0).
static SAMPLING: AtomicBool = AtomicBool::new(false);

/// More than HotSpot's default heap-sampling interval (512 KB): see
/// `Profiler::vm_init`.
const PRIME_SAMPLER_BYTES: jni::jsize = 1 << 20;

/// Whether the JVM reports stores into watched fields (the old reference of
/// each store into a reference field, `routed::REF_STORES`).
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Watches every reference field (static or not) of `class` for stores, so
/// that the store's old reference can be read before it is replaced. A
/// class not yet prepared has no fields to watch (its ClassPrepare does it).
fn watch_reference_fields(jvmti: &Jvmti, class: jni::jclass) {
    // SAFETY: the class reference is valid during the caller's callback.
    let Ok(fields) = (unsafe { jvmti.get_class_fields(class) }) else {
        return;
    };
    for f in fields {
        let Ok((_, signature, _)) = (unsafe { jvmti.get_field_name(class, f) }) else {
            continue;
        };
        if signature.starts_with('L') || signature.starts_with('[') {
            // (A watch already set is an error that changes nothing.)
            let _ = unsafe { jvmti.set_field_modification_watch(class, f) };
        }
    }
}

/// Turns SingleStep on before the region opens: enabling it makes HotSpot
/// skip the step at the thread's current location, which must not be the
/// region's first bytecode. Steps outside the region return at once.
fn enable_single_step(jvmti: &Jvmti) {
    // SAFETY: a null thread selects all threads.
    if let Err(e) = unsafe { jvmti.enable_event(jvmti::JVMTI_EVENT_SINGLE_STEP, ptr::null_mut()) } {
        log(&format!("cannot enable single steps: {e:?}"));
    }
}

/// Starts tracking this thread's calls with the frame at `depth` (and, when
/// `with_callers`, the frames below it, outermost first) as the tree's first
/// contexts; the outermost of them is the root.
fn begin_tracking(jvmti: &Jvmti, depth: i32, with_callers: bool) {
    if TRACKING.load(Ordering::Acquire) {
        return;
    }
    let mut frames = stack(jvmti, depth);
    if !with_callers {
        frames = frames.split_off(frames.len().saturating_sub(1));
    }
    let Some(&(root_mid, _)) = frames.first() else { return };
    let Some(root) = method_code(jvmti, root_mid as jni::jmethodID) else {
        return;
    };
    {
        let mut s = shared();
        if s.tree.is_some() || s.done {
            return;
        }
        let mut tree = Tree::new(&root);
        for c in s.codes.values() {
            tree.register(c);
        }
        s.tree = Some(tree);
    }
    let mut shadow = vec![Frame {
        node: 0,
        method: root_mid,
        code: root.clone(),
        pending: None,
        last: frames[0].1 as i32,
        hidden: false,
        switch_compares: None,
        counted_unreported: None,
    }];
    for &(mid, location) in &frames[1..] {
        let Some(code) = method_code(jvmti, mid as jni::jmethodID) else {
            return;
        };
        let caller = shadow.last().expect("root");
        let at = caller.last.max(0) as u32;
        let op = caller
            .code
            .opcode_at(at)
            .filter(|op| is_invoke(*op) && caller.code.invoke_enters(at, &code.info))
            .unwrap_or(0);
        let parent = caller.node;
        let node = match shared().tree.as_mut() {
            Some(t) => t.child(parent, caller.last, &code, op),
            None => return,
        };
        shadow.push(Frame {
            node,
            method: mid,
            code,
            pending: None,
            last: location as i32,
            hidden: false,
            switch_compares: None,
            counted_unreported: None,
        });
    }
    THREAD.with(|t| {
        let mut ts = t.borrow_mut();
        ts.epoch = EPOCH.load(Ordering::Acquire);
        ts.owner = true;
        ts.frames = shadow;
    });
    TRACKING.store(true, Ordering::Release);
    if let Err(e) = jvmti.enable_events_global(&[jvmti::JVMTI_EVENT_METHOD_ENTRY, jvmti::JVMTI_EVENT_METHOD_EXIT]) {
        log(&format!("cannot enable method entry and exit events: {e:?}"));
    }
}

/// Opens the region in this (the tracked) thread: from here on bytecodes and
/// calls count, in every thread.
fn begin_region(jvmti: &Jvmti) {
    {
        let mut s = shared();
        if s.begun || s.done {
            return;
        }
        let Some(tree) = s.tree.as_mut() else { return };
        tree.mark_region_start();
        s.begun = true;
    }
    // Other threads' shadow stacks (if any) are stale; the owner keeps its own.
    let epoch = EPOCH.fetch_add(1, Ordering::AcqRel) + 1;
    THREAD.with(|t| t.borrow_mut().epoch = epoch);
    let _ = REGION_BEGAN.set(std::time::Instant::now());
    if WATCHING.load(Ordering::Acquire) {
        // The classes loaded so far; those prepared later are watched as they are.
        for class in jvmti.get_loaded_classes().unwrap_or_default() {
            watch_reference_fields(jvmti, class);
        }
        if let Err(e) = jvmti.enable_events_global(&[jvmti::JVMTI_EVENT_FIELD_MODIFICATION]) {
            log(&format!("cannot enable field modification events: {e:?}"));
        }
    }
    ACTIVE.store(true, Ordering::Release);
    if let Err(e) = jvmti.enable_events_global(&REGION_EVENTS) {
        log(&format!("cannot enable the region's events: {e:?}"));
    }
}

/// True when this thread is the tracked one and its shadow stack is current.
fn tracked(ts: &ThreadState) -> bool {
    TRACKING.load(Ordering::Acquire) && ts.owner && ts.epoch == EPOCH.load(Ordering::Acquire)
}

/// Closes the region and writes the profile.
fn end_region(jvmti: &Jvmti, complete: bool, why: &str) {
    if !ACTIVE.swap(false, Ordering::AcqRel) {
        return;
    }
    let _ = jvmti.disable_events_global(&ALL_EVENTS);
    let Some(opts) = OPTIONS.get() else { return };
    let (tree, lost) = {
        let mut s = shared();
        s.done = true;
        (s.tree.take(), s.lost_sync)
    };
    let Some(tree) = tree else { return };
    let complete = complete && lost == 0;
    if lost > 0 {
        log(&format!(
            "{lost} events did not match the shadow stack; the profile is marked incomplete"
        ));
    }
    if !complete {
        log(&format!("{why}; the profile written is marked incomplete"));
    }
    let mut profile = tree.into_profile(&opts.benchmark, opts.region.name(), complete);
    profile.region_nanos = REGION_BEGAN.get().map_or(0, |t| t.elapsed().as_nanos() as u64);
    // A run through jopcal's bridge to JOP's runtime routines reads as JOP runs it.
    jopcal_profile::routed::splice(&mut profile);
    let tmp = opts.out.with_extension("jopprof.partial");
    let written = std::fs::write(&tmp, encode(&profile)).and_then(|_| std::fs::rename(&tmp, &opts.out));
    if let Err(e) = written {
        log(&format!("cannot write {}: {e}", opts.out.display()));
    }
}

/// One executed bytecode, reported by a SingleStep, or by a breakpoint
/// (`by_breakpoint`), which counts only in frames whose steps are hidden.
fn step(jvmti: &Jvmti, jni: Option<&JniEnv>, event: LocationEvent, by_breakpoint: bool) {
    step_at(
        jvmti,
        jni,
        event.method() as usize,
        event.location(),
        by_breakpoint,
        false,
    );
}

/// Where a frame that returned normally to a frame of its own method left
/// from, when the caller's next bytecode is that very one (a recursive call
/// followed by the return both share: `return d == 0 ? s : f(d - 1, s)`).
/// HotSpot reports a location (method, index) once in a row per thread, in
/// whichever frame, so that bytecode of the caller arrives as neither a step
/// nor a breakpoint (`JvmtiEnvThreadState::compare_and_set_current_location`),
/// and the agent counts it itself.
fn resumes_where_its_callee_left(callee: &Frame, caller: &Frame) -> Option<u32> {
    let left = u32::try_from(callee.last).ok()?;
    let invoke = u32::try_from(caller.last).ok()?;
    (caller.method == callee.method && caller.code.next_instruction(invoke) == Some(left)).then_some(left)
}

/// [`step`] at `location` of `method`; `unreported` for a bytecode the JVM
/// does not report, which the agent counts itself.
fn step_at(jvmti: &Jvmti, jni: Option<&JniEnv>, method: usize, location: i64, by_breakpoint: bool, unreported: bool) {
    THREAD.with(|t| {
        let mut ts = t.borrow_mut();
        let counting = ACTIVE.load(Ordering::Acquire);
        if !counting && !tracked(&ts) {
            return;
        }
        if counting && !current(jvmti, &mut ts, 0) {
            return;
        }
        let Some(top) = ts.frames.last_mut() else { return };
        if top.method != method {
            if !by_breakpoint && counting {
                shared().lost_sync += 1;
                ts.frames.clear();
            }
            return;
        }
        if by_breakpoint && !top.hidden {
            return;
        }
        if !by_breakpoint {
            // A step arrived: this frame's steps are not hidden (a step comes before a breakpoint at the same place).
            top.hidden = false;
        }
        let at = location as u32;
        if unreported {
            top.counted_unreported = Some(at);
        } else if top.counted_unreported.take() == Some(at) {
            // Reported after all (another JVM than the one this was seen on):
            // counted already.
            return;
        }
        let Some(op) = top.code.opcode_at(at) else {
            shared().lost_sync += 1;
            return;
        };
        // The bytecode this frame ran before, a lookupswitch, jumped here:
        // how many cases JOP's routine compared (`jopcal_profile::routed`).
        // By the key where an iload pushed it, else by where it jumped.
        let by_key = top.switch_compares.take();
        let compares = u32::try_from(top.last)
            .ok()
            .and_then(|last| top.code.lookupswitch_compares(last, at))
            .map(|by_target| by_key.unwrap_or(by_target));
        // jopcal's bridge method for a long shift, `lcmp` or `aastore` runs
        // in the arm of a switch on the operand that decides JOP's
        // path: the arm it jumped to is the operand, counted for the
        // caller (`jopcal_profile::routed`). (Not read from the bridge's
        // locals: GetLocal is a VM operation at a safepoint.)
        let bridge_operand = if top.code.info.class == routed::BRIDGE_CLASS {
            u32::try_from(top.last)
                .ok()
                .and_then(|last| top.code.switch_case(last, at))
                .and_then(|case| u8::try_from(case).ok())
                .zip(routed::observed_named(&top.code.info.name))
        } else {
            None
        };
        if op == routed::LOOKUPSWITCH {
            top.switch_compares = u32::try_from(top.last)
                .ok()
                .and_then(|last| top.code.iload_before(last, at))
                .and_then(|slot| {
                    // SAFETY: a null thread is the current one; frame 0 is this
                    // method's, stopped at the lookupswitch with the local live.
                    unsafe { jvmti.get_local_int(ptr::null_mut(), 0, jni::jint::from(slot)) }.ok()
                })
                .and_then(|key| top.code.lookupswitch_key_compares(at, key));
        }
        // A checkcast or instanceof of an object an aload pushed: the path
        // JOP's routine takes (counted in the region only).
        let type_path = if counting && routed::TYPE_CHECKS.contains(&op) {
            u32::try_from(top.last)
                .ok()
                .and_then(|last| top.code.aload_before(last, at))
                .zip(top.code.type_target_at(at))
                .zip(jni)
                .and_then(|((slot, target), jni)| type_check_of_local(jvmti, jni, slot, target))
        } else {
            None
        };
        top.pending = is_invoke(op).then_some(at);
        top.last = at as i32;
        let node = top.node;
        const MONITORENTER: u8 = 0xc2;
        let exit = match op {
            MONITORENTER => {
                ts.held += 1;
                None
            }
            routed::MONITOREXIT => Some(ts.release()),
            _ => None,
        };
        if !counting {
            return;
        }
        if let (Some(class), Some(tree)) = (exit, shared().tree.as_mut()) {
            tree.count_operand(node, routed::MONITOREXIT, class);
        }
        let Some(top) = ts.frames.last_mut() else { return };
        let block = top.code.block_starting_at(at);
        let node = top.node;
        let iinc = if op == 0x84 || op == 0xc4 {
            top.code.iinc_at(at)
        } else {
            None
        };
        let field = if jopcal_profile::model::FIELD_OPCODES.contains(&op) {
            top.code.field_kind_at(at)
        } else {
            None
        };
        let operand = bridge_operand.and_then(|(value, o)| {
            let caller = ts.frames.len().checked_sub(2).map(|i| ts.frames[i].node)?;
            Some((caller, o.opcode, value))
        });
        if let Some(tree) = shared().tree.as_mut() {
            tree.count(node, op, block);
            if let Some((local, inc)) = iinc {
                tree.count_iinc(node, local, inc);
            }
            if let Some(kind) = field {
                tree.count_field(node, op, kind);
            }
            if let Some((caller, op, value)) = operand {
                tree.count_operand(caller, op, value);
            }
            if let Some(k) = compares {
                tree.count_operand(node, routed::LOOKUPSWITCH, k);
            }
            if let Some(k) = type_path {
                tree.count_operand(node, op, k);
            }
        }
    });
}

/// The operand of a type check of the object in local `slot` of the
/// current frame against `target` (`routed::type_check_operand`): the
/// superclass steps to it, a failed walk, or an interface; none for a null.
fn type_check_of_local(jvmti: &Jvmti, jni: &JniEnv, slot: u16, target: &str) -> Option<u8> {
    // SAFETY: a null thread is the current one; frame 0 is the method
    // stopped at the check, with the local live (the aload just read it).
    let object = unsafe { jvmti.get_local_object(ptr::null_mut(), 0, jni::jint::from(slot)) }.ok()?;
    if object.is_null() {
        return None;
    }
    let mut names: Vec<String> = Vec::new();
    // SAFETY: `object` and the classes are local references of this callback.
    let mut at = Some(unsafe { jni.get_object_class(object) });
    while let Some(c) = at.filter(|c| !c.is_null()) {
        let (signature, _) = unsafe { jvmti.get_class_signature(c) }.ok()?;
        let name = class_name(&signature).to_string();
        let found = name == target;
        names.push(name);
        if found || names.len() > usize::from(routed::TYPE_INTERFACE) {
            break;
        }
        at = unsafe { jni.get_superclass(c) };
    }
    // An interface is never among the superclasses: only a test that found
    // no class asks whether it named one.
    let found = names.last().is_some_and(|n| n == target);
    let interface = !found && names_an_interface(jvmti, target);
    routed::type_check_operand(names.iter().map(String::as_str), target, interface)
}

/// Whether each class a type check named is an interface, by internal name.
static INTERFACES: LazyLock<Mutex<HashMap<String, bool>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Whether `target` names an interface, from the loaded classes (read again
/// for each name not yet among them). A class the test names is loaded
/// once the test has run; before its first run (this single step) the
/// object cannot be an instance of it, and it counts as a class, where the
/// instrumenting agent, whose constant loads it, knows.
fn names_an_interface(jvmti: &Jvmti, target: &str) -> bool {
    let mut known = INTERFACES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = known.get(target) {
        return *k;
    }
    for c in jvmti.get_loaded_classes().unwrap_or_default() {
        // SAFETY: the classes are local references of this callback.
        if let Ok((signature, _)) = unsafe { jvmti.get_class_signature(c) } {
            let name = class_name(&signature);
            if !known.contains_key(name) {
                let interface = unsafe { jvmti.is_interface(c) }.unwrap_or(false);
                known.insert(name.to_string(), interface);
            }
        }
    }
    known.get(target).copied().unwrap_or(false)
}

/// Words a value of type `descriptor` takes in JOP's memory: two a `long`
/// or `double` (what JOP's linker treats as wide), else one.
fn words_of(descriptor: &str) -> u32 {
    if FieldKind::of_descriptor(descriptor) == Some(FieldKind::Wide) {
        2
    } else {
        1
    }
}

/// Words of each class's instances in JOP's heap, by class signature.
static INSTANCE_WORDS: LazyLock<Mutex<HashMap<String, u32>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The words `object` of `class` (whose JVM signature is `signature`)
/// takes in JOP's heap: an array its elements (two a `long` or `double`),
/// an object its instance fields, its superclasses' included (two a `long`
/// or `double`); the handle and the header JOP keeps apart are not counted.
fn jop_words(jvmti: &Jvmti, jni: &JniEnv, class: jni::jclass, signature: &str, object: jni::jobject) -> Option<u32> {
    if let Some(element) = signature.strip_prefix('[') {
        // SAFETY: the object reference is valid during the callback.
        let length = u32::try_from(unsafe { jni.get_array_length(object) }).ok()?;
        return Some(length * words_of(element));
    }
    let mut known = INSTANCE_WORDS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = known.get(signature) {
        return Some(*w);
    }
    let mut words = 0u32;
    let mut at = Some(class);
    while let Some(c) = at.filter(|c| !c.is_null()) {
        // SAFETY: `c` is the class or a superclass, a local reference of this callback.
        for f in unsafe { jvmti.get_class_fields(c) }.ok()? {
            const STATIC: jni::jint = 0x0008;
            let modifiers = unsafe { jvmti.get_field_modifiers(c, f) }.ok()?;
            if modifiers & STATIC != 0 {
                continue;
            }
            let (_, field_signature, _) = unsafe { jvmti.get_field_name(c, f) }.ok()?;
            words += words_of(&field_signature);
        }
        at = unsafe { jni.get_superclass(c) };
    }
    known.insert(signature.to_string(), words);
    Some(words)
}

/// Sets a breakpoint on every instruction of `mid` (once per method).
fn breakpoint_everywhere(jvmti: &Jvmti, mid: jni::jmethodID, code: &MethodCode) {
    if !shared().breakpointed.insert(mid as usize) {
        return;
    }
    for &pc in code.instruction_starts() {
        // SAFETY: `mid` is a live method and `pc` one of its instruction starts.
        if unsafe { jvmti.set_breakpoint(mid, i64::from(pc)) }.is_err() {
            shared().lost_sync += 1;
        }
    }
}

impl Agent for Profiler {
    fn on_load(&self, context: AgentLoadContext<'_>) -> jni::jint {
        let text = context.options_lossy().unwrap_or_default().into_owned();
        let opts = match AgentOptions::parse(&text) {
            Ok(o) => o,
            Err(e) => {
                log(&format!("bad options `{text}`: {e}"));
                return jni::JNI_ERR;
            }
        };
        let _ = OPTIONS.set(opts);
        let Ok(jvmti) = context.vm().jvmti() else {
            log("the JVM offers no JVMTI environment");
            return jni::JNI_ERR;
        };
        let caps = jvmti.add_capabilities_with(|c| {
            c.set_can_generate_single_step_events(true);
            c.set_can_generate_method_entry_events(true);
            c.set_can_generate_method_exit_events(true);
            c.set_can_generate_breakpoint_events(true);
            c.set_can_generate_frame_pop_events(true);
            c.set_can_generate_exception_events(true);
            c.set_can_get_bytecodes(true);
            c.set_can_get_constant_pool(true);
            // Exception tables, from the class files as they load (the
            // JDK's first classes load before the VM starts).
            c.set_can_generate_early_class_hook_events(true);
            // The count of a long shift, read in jopcal's bridge (`routed`).
            c.set_can_access_local_variables(true);
        });
        if let Err(e) = caps {
            log(&format!("the JVM refuses the capabilities the profiler needs: {e:?}"));
            return jni::JNI_ERR;
        }
        // Every allocation, for the size JOP's collector sees; a JVM without
        // heap sampling (before 11) gives profiles without allocations.
        let sampling = jvmti
            .add_capabilities_with(|c| c.set_can_generate_sampled_object_alloc_events(true))
            .is_ok()
            && jvmti.set_heap_sampling_interval(0).is_ok();
        if !sampling {
            log("this JVM cannot report every allocation: the profile records none");
        }
        SAMPLING.store(sampling, Ordering::Release);
        // The old reference of each store into a reference field; a JVM
        // without field watches gives profiles without them.
        let watching = jvmti
            .add_capabilities_with(|c| c.set_can_generate_field_modification_events(true))
            .is_ok();
        WATCHING.store(watching, Ordering::Release);
        if !watching {
            log("this JVM cannot watch field stores: the profile records no old references");
        }
        let setup = jvmti.set_default_agent_callbacks().and_then(|_| {
            jvmti
                .enable_events_global(&[
                    jvmti::JVMTI_EVENT_CLASS_PREPARE,
                    jvmti::JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
                    jvmti::JVMTI_EVENT_BREAKPOINT,
                    jvmti::JVMTI_EVENT_FRAME_POP,
                    jvmti::JVMTI_EVENT_VM_DEATH,
                    jvmti::JVMTI_EVENT_VM_INIT,
                ])
                .and_then(|_| {
                    if sampling {
                        jvmti.enable_events_global(&[jvmti::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC])
                    } else {
                        Ok(())
                    }
                })
        });
        if let Err(e) = setup {
            log(&format!("cannot set up the JVMTI events: {e:?}"));
            return jni::JNI_ERR;
        }
        jni::JNI_OK
    }

    fn callback_panicked(&self, event: &'static str) {
        log(&format!("internal error in the {event} callback"));
        shared().lost_sync += 1;
    }

    fn class_prepare(&self, context: CallbackContext<'_>, event: ClassEvent) {
        let Some(opts) = OPTIONS.get() else { return };
        let jvmti = context.jvmti();
        if ACTIVE.load(Ordering::Acquire) && WATCHING.load(Ordering::Acquire) {
            watch_reference_fields(jvmti, event.class());
        }
        // SAFETY: the class reference is valid during this callback.
        let Ok((signature, _)) = (unsafe { jvmti.get_class_signature(event.class()) }) else {
            return;
        };
        let name = class_name(&signature);
        let is_main = opts.region.main_class() == Some(name);
        let is_marker = matches!(&opts.region, Region::Harness { marker, .. } if *marker == name);
        if !is_main && !is_marker {
            return;
        }
        // SAFETY: as above; method ids stay valid while the class is loaded.
        let methods = unsafe { jvmti.get_class_methods(event.class()) }.unwrap_or_default();
        for m in methods {
            let Ok((mname, desc, _)) = (unsafe { jvmti.get_method_name(m) }) else {
                continue;
            };
            match (mname.as_str(), desc.as_str()) {
                ("start", "()V") if is_marker => {
                    START_ID.store(m as usize, Ordering::Release);
                    // SAFETY: `m` is a method of the class being prepared.
                    if let Err(e) = unsafe { jvmti.set_breakpoint(m, 0) } {
                        log(&format!("cannot set a breakpoint in {name}.start: {e:?}"));
                    }
                }
                ("stop", "()V") if is_marker => STOP_ID.store(m as usize, Ordering::Release),
                ("main", d)
                    if routed::is_main_descriptor(d)
                        && is_main
                        && matches!(opts.region, Region::Main { .. } | Region::Harness { .. }) =>
                {
                    MAIN_ID.store(m as usize, Ordering::Release)
                }
                (n, _) if is_main && matches!(&opts.region, Region::Method { name, .. } if name == n) => {
                    // The first overload found is the region's method.
                    let _ = MAIN_ID.compare_exchange(0, m as usize, Ordering::AcqRel, Ordering::Acquire);
                }
                _ => {}
            }
        }
        enable_single_step(jvmti);
        if is_main {
            // SAFETY: a null thread selects all threads.
            let _ = unsafe { jvmti.enable_event(jvmti::JVMTI_EVENT_METHOD_ENTRY, ptr::null_mut()) };
        } else if opts.region.main_class().is_none() {
            // No main class given: track from here (the thread that needs the harness).
            begin_tracking(jvmti, 0, true);
        }
    }

    fn breakpoint(&self, context: CallbackContext<'_>, event: LocationEvent) {
        if event.method() as usize == START_ID.load(Ordering::Acquire) && !shared().begun {
            // SAFETY: depth 0 of the current thread is the frame of start().
            let _ = unsafe { context.jvmti().notify_frame_pop(ptr::null_mut(), 0) };
        } else {
            step(context.jvmti(), context.jni().map(|j| -> &JniEnv { j }), event, true);
        }
    }

    fn frame_pop(&self, context: CallbackContext<'_>, event: FramePopEvent) {
        if event.method() as usize == START_ID.load(Ordering::Acquire) {
            if !TRACKING.load(Ordering::Acquire) {
                // Not tracked yet (start() called on another thread first): track from its caller.
                begin_tracking(context.jvmti(), 1, true);
            }
            // start()'s own return is part of the tracked calls, not of the region.
            THREAD.with(|t| {
                let mut ts = t.borrow_mut();
                if tracked(&ts) && ts.frames.last().is_some_and(|f| f.method == event.method() as usize) {
                    ts.frames.pop();
                    if let Some(tree) = shared().tree.as_mut() {
                        tree.event(Event::Return);
                    }
                }
            });
            begin_region(context.jvmti());
        }
    }

    fn method_entry(&self, context: CallbackContext<'_>, event: MethodEvent) {
        let jvmti = context.jvmti();
        let mid = event.method() as usize;
        let counting = ACTIVE.load(Ordering::Acquire);
        if !counting && !TRACKING.load(Ordering::Acquire) {
            if mid == MAIN_ID.load(Ordering::Acquire) && !shared().begun {
                // main, or the region's method: it is the root, whoever called it.
                begin_tracking(jvmti, 0, false);
                if matches!(
                    OPTIONS.get().map(|o| &o.region),
                    Some(Region::Main { .. } | Region::Method { .. })
                ) {
                    begin_region(jvmti);
                }
            }
            return;
        }
        if counting && mid == STOP_ID.load(Ordering::Acquire) {
            end_region(jvmti, true, "");
            return;
        }
        THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !counting && !tracked(&ts) {
                return;
            }
            // The entered frame is already on the real stack: seed from its caller.
            if counting && !current(jvmti, &mut ts, 1) {
                return;
            }
            let Some(code) = method_code(jvmti, event.method()) else {
                return;
            };
            let owner = ts.owner;
            let Some(top) = ts.frames.last_mut() else { return };
            let (callsite, op) = match top.pending.take() {
                Some(at) if top.code.invoke_enters(at, &code.info) => (at as i32, top.code.opcode_at(at).unwrap_or(0)),
                Some(at) => {
                    // A JVM-made call while the invoke waits (e.g. class loading): keep it waiting.
                    top.pending = Some(at);
                    (at as i32, 0)
                }
                None => (top.last, 0),
            };
            let parent = top.node;
            let hidden = op == 0 || top.hidden;
            let node = {
                let mut s = shared();
                let Some(tree) = s.tree.as_mut() else { return };
                let node = tree.child(parent, callsite, &code, op);
                if counting {
                    tree.enter(node);
                }
                if owner {
                    tree.event(Event::Invoke(node));
                }
                node
            };
            if code.info.synchronized {
                ts.held += 1;
            }
            ts.frames.push(Frame {
                node,
                method: mid,
                code: code.clone(),
                pending: None,
                last: -1,
                hidden,
                switch_compares: None,
                counted_unreported: None,
            });
            // Only while counting. Before the region (calls only tracked),
            // everything below a frame the JVM entered is the JVM's work,
            // which the estimate skips whatever its call sites
            // (`Profile::jvm_work`: no cache access, no charge), and each
            // breakpoint is a safepoint: a built-in workload's class loading
            // before its region set 6,408 of them, most of its JVM's time.
            if hidden && counting {
                breakpoint_everywhere(jvmti, event.method(), &code);
            }
        });
    }

    fn method_exit(&self, context: CallbackContext<'_>, event: MethodExitEvent) {
        let jvmti = context.jvmti();
        let mid = event.method() as usize;
        let counting = ACTIVE.load(Ordering::Acquire);
        let mut unreported = None;
        let region_over = THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !counting && !tracked(&ts) {
                return false;
            }
            // The exiting frame is still on the real stack.
            if counting && !current(jvmti, &mut ts, 0) {
                return false;
            }
            // start()'s return was taken when the region opened.
            if mid == START_ID.load(Ordering::Acquire) && ts.frames.last().is_none_or(|f| f.method != mid) {
                return false;
            }
            let Some(top) = ts.frames.pop() else { return false };
            if top.method != mid {
                shared().lost_sync += 1;
                ts.frames.clear();
                return false;
            }
            if event.was_popped_by_exception() {
                // The exception found no handler here; in the caller it
                // arose at the invoke of this frame (its last bytecode).
                let caller_pc = ts.frames.last().and_then(|f| u32::try_from(f.last).ok());
                if let Some((thrown, pc)) = ts.in_flight.take() {
                    if counting {
                        if let Some(tree) = shared().tree.as_mut() {
                            tree.count_arrival_n(top.node, pc, &thrown, None, 1);
                        }
                    }
                    ts.in_flight = caller_pc.map(|at| (thrown, at));
                }
            }
            if !event.was_popped_by_exception() {
                unreported = ts
                    .frames
                    .last()
                    .and_then(|caller| resumes_where_its_callee_left(&top, caller));
            }
            // A synchronized method's return runs the linker's monitorexit on JOP
            // (an exception leaves without one).
            let exit = top.code.info.synchronized.then(|| ts.release());
            let mut s = shared();
            if let Some(tree) = s.tree.as_mut() {
                if let (Some(class), true, false) = (exit, counting, event.was_popped_by_exception()) {
                    tree.count_operand(top.node, routed::MONITOREXIT, class);
                }
                if ts.owner {
                    tree.event(if event.was_popped_by_exception() {
                        Event::Unwind
                    } else {
                        Event::Return
                    });
                }
            }
            drop(s);
            counting && ts.owner && ts.frames.is_empty()
        });
        if let Some(at) = unreported {
            step_at(
                jvmti,
                context.jni().map(|j| -> &JniEnv { j }),
                mid,
                i64::from(at),
                false,
                true,
            );
        }
        if region_over {
            match OPTIONS.get().map(|o| &o.region) {
                Some(Region::Main { .. } | Region::Method { .. }) if !event.was_popped_by_exception() => {
                    end_region(jvmti, true, "")
                }
                Some(Region::Main { .. } | Region::Method { .. }) => {
                    end_region(jvmti, false, "the region's method ended with an exception")
                }
                _ => end_region(
                    jvmti,
                    false,
                    "the method that called start() returned before stop() was called",
                ),
            }
        }
    }

    fn vm_init(&self, context: CallbackContext<'_>, _event: ThreadEvent) {
        // HotSpot (17) gives each thread its first sample point when the
        // thread is made, at the interval then in force: the main thread,
        // made before this agent loads, samples nothing until it has
        // allocated the default interval (512 KB), so a small program's
        // allocations went unseen. One allocation larger than that, here on
        // the main thread, before any of the program runs, passes that point;
        // from then on every allocation is sampled. Threads made later start
        // at the interval of 0 set in `on_load`.
        if !SAMPLING.load(Ordering::Acquire) {
            return;
        }
        let Some(jni) = context.jni() else { return };
        if let Some(array) = jni.new_byte_array(PRIME_SAMPLER_BYTES) {
            // SAFETY: a local reference this callback made.
            unsafe { jni.delete_local_ref(array) };
        }
    }

    fn sampled_object_alloc(&self, context: CallbackContext<'_>, event: ObjectAllocationEvent) {
        if !ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let jvmti = context.jvmti();
        // Only what a bytecode of a counted frame allocates (not the JVM's
        // own allocations: a stack trace's arrays, a class's mirror, a string
        // constant resolved), as JOP's runtime allocates for that bytecode.
        // SAFETY: the class reference is valid during the callback.
        let Ok((signature, _)) = (unsafe { jvmti.get_class_signature(event.class()) }) else {
            return;
        };
        let allocating = THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !current(jvmti, &mut ts, 0) {
                return None;
            }
            ts.frames.last().and_then(|top| {
                // What the bytecode makes, not what the JVM makes while it
                // waits (the class a `new` resolves, its mirror).
                u32::try_from(top.last)
                    .ok()
                    .filter(|at| top.code.allocates(*at, &signature))
                    .map(|_| top.node)
            })
        });
        let Some(node) = allocating else { return };
        let Some(jni) = context.jni() else { return };
        if let Some(words) = jop_words(jvmti, jni, event.class(), &signature, event.object()) {
            if let Some(tree) = shared().tree.as_mut() {
                // Not the host JVM's class loading or static initializers.
                if !tree.is_jvm_work(node) {
                    tree.count_allocation(words);
                }
            }
        }
    }

    fn field_modification(&self, context: CallbackContext<'_>, event: FieldModificationEvent) {
        if !ACTIVE.load(Ordering::Acquire) {
            return;
        }
        let jvmti = context.jvmti();
        let Some(jni) = context.jni() else { return };
        // A store by a putfield or putstatic of a counted frame (not one by
        // the JVM or through JNI).
        let store = THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !current(jvmti, &mut ts, 0) {
                return None;
            }
            let top = ts.frames.last()?;
            if top.method != event.method() as usize {
                return None;
            }
            let op = top.code.opcode_at(event.location() as u32)?;
            routed::REF_STORES.contains(&op).then_some((top.node, op))
        });
        let Some((node, op)) = store else { return };
        // SAFETY: the object, class and field are valid during this callback;
        // the store has not happened yet.
        let old = unsafe {
            if event.object().is_null() {
                jni.get_static_object_field(event.field_class(), event.field())
            } else {
                jni.get_object_field(event.object(), event.field())
            }
        };
        let held = if old.is_null() {
            routed::REF_OLD_NULL
        } else {
            routed::REF_OLD_HELD
        };
        if let Some(tree) = shared().tree.as_mut() {
            tree.count_operand(node, op, held);
        }
    }

    fn single_step(&self, context: CallbackContext<'_>, event: LocationEvent) {
        step(context.jvmti(), context.jni().map(|j| -> &JniEnv { j }), event, false);
    }

    fn class_file_load_hook<'c>(&self, _context: CallbackContext<'c>, event: ClassFileLoadHookEvent<'c>) {
        keep_tables(event.class_data());
    }

    fn exception(&self, context: CallbackContext<'_>, event: ExceptionEvent) {
        let jvmti = context.jvmti();
        let Some(jni) = context.jni() else { return };
        if !ACTIVE.load(Ordering::Acquire) {
            return;
        }
        THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !current(jvmti, &mut ts, 0) {
                return;
            }
            if ts.frames.last().is_none_or(|f| f.method != event.method() as usize) {
                ts.in_flight = None;
                return;
            }
            let at = u32::try_from(event.location()).ok();
            ts.in_flight = ancestry(jvmti, jni, event.exception()).zip(at);
        });
    }

    fn exception_catch(&self, context: CallbackContext<'_>, event: ExceptionCatchEvent) {
        let jvmti = context.jvmti();
        THREAD.with(|t| {
            let mut ts = t.borrow_mut();
            if !current(jvmti, &mut ts, 0) {
                return;
            }
            let in_flight = ts.in_flight.take();
            let Some(top) = ts.frames.last_mut() else { return };
            if top.method != event.method() as usize {
                return;
            }
            if let (Some((thrown, pc)), true) = (in_flight, ACTIVE.load(Ordering::Acquire)) {
                if let Some(tree) = shared().tree.as_mut() {
                    tree.count_arrival_n(top.node, pc, &thrown, u32::try_from(event.location()).ok(), 1);
                }
            }
            top.pending = None;
            let at = event.location() as u32;
            if top.code.block_starting_at(at).is_none() {
                let node = top.node;
                if let Some(tree) = shared().tree.as_mut() {
                    tree.count_handler(node, at);
                }
            }
        });
    }

    fn vm_death(&self, context: CallbackContext<'_>) {
        if ACTIVE.load(Ordering::Acquire) {
            end_region(
                context.jvmti(),
                false,
                "the JVM exited inside the region (System.exit, an uncaught exception or a fatal error)",
            );
        } else if !shared().begun {
            let what = match OPTIONS.get().map(|o| &o.region) {
                Some(Region::Harness { marker, .. }) => format!("no call of {marker}.start() returned"),
                Some(Region::Main { class }) => format!("{class}.main was never entered"),
                Some(Region::Method { class, name }) => format!("{class}.{name} was never entered"),
                None => "no options".to_string(),
            };
            log(&format!("the region never began: {what}"));
        }
    }
}

export_agent!(Profiler);
