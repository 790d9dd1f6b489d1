// jopcal's Verilator test bench: clocks a DUT that honours hdl-sim/CONTRACT.md,
// models its word-wide memory with read/write wait states (or the SRAM chip
// behind the DUT's own memory controller), and bridges its
// UART (character ports or serial lines) to a pseudo-terminal, a TCP port or
// stdin/stdout, so the host drives a simulated JOP exactly like a board.
//
// The build (`jopcal sim build`) generates bench_config.h: the top's class and
// header, and which optional ports the DUT has.
#include "bench_config.h"
#include TOP_HEADER
#include "verilated.h"
#ifdef BENCH_TRACE
#include "verilated_vcd_c.h"
#endif

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <fcntl.h>
#include <map>
#include <fstream>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>
#include <vector>

#ifdef HAS_TRACE_TAPS
#define TRACE_TOS_NOW ((uint32_t)top->trace_tos)
#else
#define TRACE_TOS_NOW 0u
#endif

namespace {

enum Exit { PASS = 0, USAGE = 1, TIMEOUT = 2, DUT_ERROR = 3, STACK_OVERFLOW = 4 };

volatile sig_atomic_t stop_requested = 0;
void on_term(int) { stop_requested = 1; }

[[noreturn]] void die(int code, const std::string& msg) {
    std::fflush(stdout);
    std::fprintf(stderr, "jopcal-bench: %s\n", msg.c_str());
    std::exit(code);
}

struct Options {
    enum Mode { NONE, PTY, TCP, STDIO, BARE } mode = NONE;
    int tcp_port = 0;
    uint64_t bare_cycles = 0;
    unsigned read_wait = 1, write_wait = 2;
    uint64_t mem_words = 1u << 20;
    std::string preload;
    uint64_t cycle_limit = 0;  // 0: none
    double timeout_s = 0;      // 0: none
    unsigned bit_cycles = 868;
    // The host side of the serial line: its own bit time (a board's UART
    // clock differs from the host's; 0: the DUT's), and idle bits after each
    // burst of host_burst bytes it sends (a host pacing its bytes below the
    // line rate in bursts, as jopcal's classic download does).
    double host_bit_cycles = 0, host_gap_bits = 0, uart_error_pct = 0;
    unsigned host_burst = 1;
    // The host's download window (jopcal's classic download, `Pace::Window`):
    // it keeps at most host_window of its bytes unechoed and sends again once
    // host_refill of them are free (or the rest of the image is). 0: unknown,
    // the bench takes the host's bytes whenever they come.
    unsigned host_window = 0, host_refill = 0;
    std::string trace;
    uint64_t trace_from = 0, trace_to = UINT64_MAX;
    std::string methods, events;  // trace taps: per-method CSV, per-bytecode events
    bool past_overflow = false;
    bool stop_at_exit = false;  // end the run where the trace ends at the program's "JVM exit!"
};

uint64_t number(const char* s, const char* what) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || !end || *end) die(USAGE, std::string(what) + ": not a number: " + s);
    return v;
}

double fraction(const char* s, const char* what) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(s, &end);
    if (errno || !end || *end || !(v >= 0) || v > 1e9) die(USAGE, std::string(what) + ": not a non-negative number: " + s);
    return v;
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto next = [&](const char* what) -> const char* {
            if (i + 1 >= argc) die(USAGE, a + " needs " + what);
            return argv[++i];
        };
        if (a == "--pty") o.mode = Options::PTY;
        else if (a == "--stdout") o.mode = Options::STDIO;
        else if (a == "--tcp") { o.mode = Options::TCP; o.tcp_port = (int)number(next("a port"), "--tcp"); }
        else if (a == "--bare") { o.mode = Options::BARE; o.bare_cycles = number(next("a cycle count"), "--bare"); }
        else if (a == "--read-wait") o.read_wait = (unsigned)number(next("cycles"), "--read-wait");
        else if (a == "--write-wait") o.write_wait = (unsigned)number(next("cycles"), "--write-wait");
        else if (a == "--mem-words") o.mem_words = number(next("a word count"), "--mem-words");
        else if (a == "--preload") o.preload = next("an image");
        else if (a == "--cycle-limit") o.cycle_limit = number(next("cycles"), "--cycle-limit");
        else if (a == "--timeout") o.timeout_s = (double)number(next("seconds"), "--timeout");
        else if (a == "--bit-cycles") o.bit_cycles = (unsigned)number(next("cycles"), "--bit-cycles");
        else if (a == "--host-bit-cycles") o.host_bit_cycles = fraction(next("cycles"), "--host-bit-cycles");
        else if (a == "--host-gap-bits") o.host_gap_bits = fraction(next("bits"), "--host-gap-bits");
        else if (a == "--host-burst") o.host_burst = (unsigned)number(next("bytes"), "--host-burst");
        else if (a == "--host-window") o.host_window = (unsigned)number(next("bytes"), "--host-window");
        else if (a == "--host-refill") o.host_refill = (unsigned)number(next("bytes"), "--host-refill");
        else if (a == "--uart-error") {
            // The DUT's UART clock against the host's, in percent (-1.4: 1.4% slow).
            char* end = nullptr;
            const char* v = next("a percentage");
            o.uart_error_pct = std::strtod(v, &end);
            if (!end || *end || o.uart_error_pct <= -50 || o.uart_error_pct >= 50) die(USAGE, std::string("--uart-error: not a percentage within +-50: ") + v);
        }
        else if (a == "--trace") o.trace = next("a file");
        else if (a == "--trace-from") o.trace_from = number(next("a cycle"), "--trace-from");
        else if (a == "--trace-to") o.trace_to = number(next("a cycle"), "--trace-to");
        else if (a == "--methods") o.methods = next("a file");
        else if (a == "--events") o.events = next("a file");
        else if (a == "--run-past-overflow") o.past_overflow = true;
        else if (a == "--stop-at-exit") o.stop_at_exit = true;
        else die(USAGE, "unknown option " + a + " (see hdl-sim/README.md)");
    }
    if (o.mode == Options::NONE) die(USAGE, "say where the UART goes: --pty, --tcp PORT or --stdout (or --bare N)");
    if (o.bit_cycles < 4) die(USAGE, "--bit-cycles must be at least 4");
    if (o.host_bit_cycles != 0 && o.host_bit_cycles < 4) die(USAGE, "--host-bit-cycles must be at least 4");
    if (o.host_burst < 1) die(USAGE, "--host-burst must be at least 1");
    if ((o.host_window == 0) != (o.host_refill == 0) || o.host_refill > o.host_window)
        die(USAGE, "--host-window and --host-refill go together, the refill at most the window");
    return o;
}

// Reads a .jop image: decimal words, commas/white space, // and /* */ comments.
std::vector<uint32_t> read_image(const std::string& path) {
    std::ifstream f(path);
    if (!f) die(USAGE, path + ": cannot read");
    std::stringstream ss;
    ss << f.rdbuf();
    std::string t = ss.str();
    std::vector<uint32_t> w;
    size_t i = 0, line = 1;
    while (i < t.size()) {
        char c = t[i];
        if (c == '\n') { line++; i++; }
        else if (c == ',' || isspace((unsigned char)c)) i++;
        else if (t.compare(i, 2, "//") == 0) { while (i < t.size() && t[i] != '\n') i++; }
        else if (t.compare(i, 2, "/*") == 0) {
            size_t e = t.find("*/", i + 2);
            if (e == std::string::npos) die(USAGE, path + ":" + std::to_string(line) + ": unterminated /* comment");
            for (size_t k = i; k < e; k++) if (t[k] == '\n') line++;
            i = e + 2;
        } else if (c == '-' || isdigit((unsigned char)c)) {
            size_t j = i + 1;
            while (j < t.size() && isdigit((unsigned char)t[j])) j++;
            w.push_back((uint32_t)std::strtoll(t.substr(i, j - i).c_str(), nullptr, 10));
            i = j;
        } else die(USAGE, path + ":" + std::to_string(line) + ": unexpected '" + std::string(1, c) + "'");
    }
    if (w.empty() || w[0] != w.size()) die(USAGE, path + ": word 0 does not give the number of words");
    return w;
}

// With the host's window known (--host-window), the cycle from which the
// bench feeds it to the DUT's UART, waiting for the host where it is sure to
// send: 2^16 cycles, well after the boot microcode starts to wait.
constexpr uint64_t LOCKSTEP_FROM = 1ull << 16;

// The host side of the UART: a file descriptor pair polled without blocking.
struct Line {
    int in = -1, out = -1;
    bool hangup_is_silence = false;
    std::deque<uint8_t> rx;
    std::vector<uint8_t> tx;

    // Bytes read from the host and written to it, and the first four it
    // sent (a JOP image's word 0: its length in words, most significant
    // byte first).
    uint64_t received = 0, written = 0;
    uint8_t head[4] = {0, 0, 0, 0};

    void poll() {
        uint8_t buf[4096];
        for (;;) {
            ssize_t n = ::read(in, buf, sizeof buf);
            if (n > 0) {
                for (ssize_t i = 0; i < n && received + i < 4; i++) head[received + i] = buf[i];
                received += (uint64_t)n;
                rx.insert(rx.end(), buf, buf + n);
                continue;
            }
            if (n == 0 && !hangup_is_silence) in_closed = true;
            break;  // EAGAIN, EIO (no host on the pty yet) or end of input
        }
        flush();
    }
    void flush() {
        size_t done = 0;
        while (done < tx.size()) {
            ssize_t n = ::write(out, tx.data() + done, tx.size() - done);
            if (n <= 0) break;  // nobody listening: the bytes are lost, as on a wire
            done += (size_t)n;
            written += (uint64_t)n;
        }
        tx.clear();
    }
    bool in_closed = false;

    // Whether a host that downloads an image with a window of `window`
    // bytes, refilled `refill` at a time, sends more now: the image is not
    // all sent, and as many bytes are free in its window as it sends at
    // once. Its echoes are the bytes written to it (the boot microcode
    // echoes every byte, and prints nothing before the program starts).
    bool host_sends(unsigned window, unsigned refill) const {
        if (window == 0) return false;
        if (received < 4) return true;
        if (download_done()) return false;
        const uint64_t unechoed = received > written ? received - written : 0;
        const uint64_t room = unechoed >= window ? 0 : window - unechoed;
        return room >= std::min<uint64_t>(refill, image_bytes() - received);
    }

    // The image's length in bytes, as its word 0 gives it in words.
    uint64_t image_bytes() const {
        return 4 * ((uint64_t)head[0] << 24 | (uint64_t)head[1] << 16 | (uint64_t)head[2] << 8 | head[3]);
    }

    // Whether the whole image has come.
    bool download_done() const { return received >= 4 && received >= image_bytes(); }

    // Waits, without simulated time passing, until the host's next bytes
    // come: the download then reaches the DUT at the same simulated times
    // however fast the host answers. False after `limit_s` seconds with
    // nothing (the host does not keep to the window it was said to have).
    bool wait_for_host(double limit_s) {
        flush();
        const auto t0 = std::chrono::steady_clock::now();
        while (rx.empty() && !in_closed) {
            pollfd p{in, POLLIN, 0};
            int r = ::poll(&p, 1, 50);
            if (r > 0 && (p.revents & POLLIN)) poll();
            else if (r > 0) usleep(1000);  // a hang-up: no host on the terminal yet
            if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit_s) return false;
        }
        return true;
    }
};

void nonblocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

Line open_line(const Options& o) {
    Line l;
    if (o.mode == Options::PTY) {
        int m = posix_openpt(O_RDWR | O_NOCTTY);
        if (m < 0 || grantpt(m) || unlockpt(m)) die(USAGE, std::string("cannot open a pseudo-terminal: ") + std::strerror(errno));
        const char* name = ptsname(m);
        // Raw mode on the far end, so no byte is translated.
        int s = ::open(name, O_RDWR | O_NOCTTY);
        if (s >= 0) {
            termios t{};
            tcgetattr(s, &t);
            cfmakeraw(&t);
            tcsetattr(s, TCSANOW, &t);
            ::close(s);
        }
        nonblocking(m);
        l.in = l.out = m;
        l.hangup_is_silence = true;
        std::printf("%s\n", name);
    } else if (o.mode == Options::TCP) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        int one = 1;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons((uint16_t)o.tcp_port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (bind(ls, (sockaddr*)&a, sizeof a) || listen(ls, 1)) die(USAGE, std::string("cannot listen: ") + std::strerror(errno));
        socklen_t len = sizeof a;
        getsockname(ls, (sockaddr*)&a, &len);
        std::printf("tcp://127.0.0.1:%d\n", ntohs(a.sin_port));
        std::fflush(stdout);
        int c = accept(ls, nullptr, nullptr);
        if (c < 0) die(USAGE, "accept failed");
        nonblocking(c);
        l.in = l.out = c;
    } else {
        nonblocking(0);
        l.in = 0;
        l.out = 1;
        // The end of stdin is not the end of the run (a preloaded DUT needs no input).
        l.hangup_is_silence = true;
    }
    std::fflush(stdout);
    return l;
}

// What the trace taps show (CONTRACT.md, "trace taps"), turned into the
// virtual board's accounting: every bytecode's cycles, from its fetch to the
// next fetch, go to the method it belongs to; a method is entered when the
// bytecode fetch after a method-cache lookup runs its code (a call unless
// the bytecode that looked it up was a return). The trace ends at the first
// fetch after the program wrote "JVM exit!" to its UART, when the stack
// overflows, or when the run stops.
struct Tracer {
    struct Stat { uint64_t calls = 0, bytecodes = 0, cycles = 0, loads = 0; };
    // Event records (hdl-sim/CONTRACT.md): little-endian, 16 bytes.
    enum : uint8_t { HIT = 1, MISS = 2, START = 0x40, END = 0x80 };
    enum Reason : uint8_t { EXIT = 1, OVERFLOW = 2, STOPPED = 3 };
    std::map<uint32_t, Stat> stats;
    FILE* events = nullptr;
    bool on = false, ended = false, started = false;
    bool lookup = false;           // `find` was high in the last cycle
    bool pending = false;          // a lookup since the last fetch
    uint32_t pending_addr = 0;
    uint32_t method = 0, start = 0;
    // The bytecode running: where it was fetched, its opcode, flags.
    bool have = false;
    uint32_t b_method = 0; uint16_t b_pc = 0; uint8_t b_op = 0, b_flags = 0;
    uint64_t b_cycle = 0;
    char tail[9] = {0};
    bool exit_seen = false;

    void record(uint32_t m, uint16_t pc, uint8_t op, uint8_t flags, uint32_t cycles, uint32_t tos = 0) {
        if (!events) return;
        uint8_t r[16];
        for (int i = 0; i < 4; i++) r[i] = (uint8_t)(m >> (8 * i));
        r[4] = (uint8_t)pc; r[5] = (uint8_t)(pc >> 8);
        r[6] = op; r[7] = flags;
        for (int i = 0; i < 4; i++) r[8 + i] = (uint8_t)(cycles >> (8 * i));
        for (int i = 0; i < 4; i++) r[12 + i] = (uint8_t)(tos >> (8 * i));
        fwrite(r, 1, sizeof r, events);
    }
    // A bytecode done at `cycle` whose stack top is read TOS_DELAY cycles
    // later, when its last microinstruction has left the pipeline.
    static const uint64_t TOS_DELAY = 3;
    struct Done { uint32_t m; uint16_t pc; uint8_t op, flags; uint32_t cycles; uint64_t at; };
    std::deque<Done> waiting;
    // Writes the bytecodes whose stack top is due by `cycle` (`tos`: the top now).
    void sample(uint64_t cycle, uint32_t tos) {
        while (!waiting.empty() && waiting.front().at + TOS_DELAY <= cycle) {
            const Done& d = waiting.front();
            record(d.m, d.pc, d.op, d.flags, d.cycles, tos);
            waiting.pop_front();
        }
    }
    // Closes the running bytecode at `cycle`.
    void close(uint64_t cycle) {
        if (!have) return;
        uint64_t d = cycle - b_cycle;
        stats[b_method].cycles += d;
        if (events) waiting.push_back(Done{b_method, b_pc, b_op, b_flags, (uint32_t)d, cycle});
        have = false;
    }
    // At the end: what still waits gets the stack top as it is.
    void drain(uint32_t tos) {
        for (const Done& d : waiting) record(d.m, d.pc, d.op, d.flags, d.cycles, tos);
        waiting.clear();
    }
    void end(uint64_t cycle, Reason why, uint32_t tos) {
        if (ended || !on) return;
        uint8_t flags = (uint8_t)(END | (why << 4));
        if (why == EXIT || !have) {
            close(cycle);
            drain(tos);
            record(0, 0, 0, flags, (uint32_t)cycle);
        } else {
            drain(tos);
            // The bytecode the run ended in, with the cycles it had run.
            stats[b_method].cycles += cycle - b_cycle;
            record(b_method, b_pc, b_op, flags, (uint32_t)(cycle - b_cycle));
            have = false;
        }
        ended = true;
        if (events) fflush(events);
    }
    void uart(uint8_t b) {
        std::memmove(tail, tail + 1, 8);
        tail[8] = (char)b;
        if (std::memcmp(tail, "JVM exit!", 9) == 0) exit_seen = true;
    }
    // One fetch: `op` at cache byte address `pc_cache`, `exc` an exception taken instead.
    // `counter`: the DUT's own cycle counter this cycle (the bench's cycle if it has none).
    void fetch(uint64_t cycle, uint32_t counter, uint8_t op, uint32_t pc_cache, bool exc, bool hit, uint32_t start_words,
               uint32_t cache_bytes, uint32_t tos) {
        if (ended) return;
        if (exit_seen) { end(cycle, EXIT, tos); return; }
        if (!started) {
            started = true;
            record(0, 0, 0, START, counter);
        }
        uint8_t prev_op = have ? b_op : 0;
        bool prev = have;
        close(cycle);
        uint8_t flags = 0;
        if (pending) {
            pending = false;
            method = pending_addr;
            start = start_words;
            bool ret = prev && prev_op >= 172 && prev_op <= 177;
            if (!ret) stats[method].calls++;
            if (!hit) stats[method].loads++;
            flags = hit ? HIT : MISS;
        }
        have = true;
        b_method = method;
        b_pc = (uint16_t)((pc_cache - start * 4) & (cache_bytes - 1));
        b_op = exc ? 241 : op;  // JOP's sys_exc runs instead of the fetched bytecode
        b_flags = flags;
        b_cycle = cycle;
        stats[method].bytecodes++;
    }
    void write_methods(const std::string& path) {
        std::string tmp = path + ".partial";
        FILE* f = fopen(tmp.c_str(), "w");
        if (!f) die(USAGE, path + ": cannot write");
        fprintf(f, "code_word,calls,bytecodes,cycles,cache_loads\n");
        for (auto& [m, s] : stats)
            if (m) fprintf(f, "%u,%llu,%llu,%llu,%llu\n", m, (unsigned long long)s.calls, (unsigned long long)s.bytecodes,
                           (unsigned long long)s.cycles, (unsigned long long)s.loads);
        if (fclose(f) || rename(tmp.c_str(), path.c_str())) die(USAGE, path + ": cannot write");
    }
};

}  // namespace

int main(int argc, char** argv) {
    Options o = parse(argc, argv);
    std::signal(SIGTERM, on_term);
    std::signal(SIGINT, on_term);
    auto ctx = std::make_unique<VerilatedContext>();
    ctx->commandArgs(1, argv);
    auto top = std::make_unique<TOP_CLASS>(ctx.get());

    if (o.mode == Options::BARE) {
        // The trivial loop the bench's overhead is measured against.
        auto t0 = std::chrono::steady_clock::now();
        top->reset = 1;
        for (uint64_t c = 0; c < o.bare_cycles; c++) {
            if (c == 8) top->reset = 0;
            top->clk = 0; top->eval();
            top->clk = 1; top->eval();
        }
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::fprintf(stderr, "jopcal-bench: bare: %llu cycles in %.3f s\n", (unsigned long long)o.bare_cycles, s);
        return PASS;
    }

    std::vector<uint32_t> mem;
#if defined(HAS_MEM) || defined(HAS_SRAM)
    mem.assign(o.mem_words, 0);
    if (!o.preload.empty()) {
        auto img = read_image(o.preload);
        if (img.size() > mem.size()) die(USAGE, o.preload + ": " + std::to_string(img.size()) + " words do not fit in --mem-words");
        std::copy(img.begin(), img.end(), mem.begin());
    }
#ifdef HAS_SRAM
    if (o.mem_words > (1ull << MEM_ADDR_W)) mem.resize(1ull << MEM_ADDR_W);
#endif
#else
    if (!o.preload.empty()) die(USAGE, "--preload needs a DUT with the memory port (CONTRACT.md)");
#endif
    Line line = open_line(o);

#ifdef BENCH_TRACE
    std::unique_ptr<VerilatedVcdC> vcd;
    if (!o.trace.empty()) {
        ctx->traceEverOn(true);
        vcd = std::make_unique<VerilatedVcdC>();
        top->trace(vcd.get(), 99);
        vcd->open(o.trace.c_str());
    }
#else
    if (!o.trace.empty()) die(USAGE, "this bench was built without tracing: jopcal sim build --trace");
#endif

    Tracer tracer;
#ifdef HAS_TRACE_TAPS
    // Always on with the taps: it also says where a stack overflow happened.
    tracer.on = true;
#endif
    if (!o.methods.empty() || !o.events.empty()) {
#ifndef HAS_TRACE_TAPS
        die(USAGE, "--methods and --events need a DUT with the trace taps (CONTRACT.md)");
#endif
    }
    if (o.stop_at_exit) {
#ifndef HAS_TRACE_TAPS
        die(USAGE, "--stop-at-exit needs a DUT with the trace taps (CONTRACT.md)");
#endif
    }
    if (!o.events.empty()) {
        tracer.events = fopen(o.events.c_str(), "wb");
        if (!tracer.events) die(USAGE, o.events + ": cannot write: " + std::strerror(errno));
        setvbuf(tracer.events, nullptr, _IOFBF, 1 << 20);
        fwrite("JOPEVT2\n", 1, 8, tracer.events);
    }

    auto t0 = std::chrono::steady_clock::now();
    uint64_t cycle = 0;
#ifdef HAS_MEM
    int mem_pending = 0;      // 1 read, 2 write
    unsigned mem_wait = 0;
    uint64_t mem_addr = 0;
    uint32_t mem_data = 0;
#endif
#ifdef HAS_UART_SERIAL
    // Receiver of the DUT's txd and driver of its rxd.
    // The host's side of the line in 1/65536 cycles: its bit time, the idle
    // time after each byte it sends.
    const double host_bit = o.host_bit_cycles > 0 ? o.host_bit_cycles : (double)o.bit_cycles * (1.0 + o.uart_error_pct / 100.0);
    const uint64_t host_bit_fx = (uint64_t)(host_bit * 65536.0);
    const uint64_t host_gap_fx = (uint64_t)(o.host_gap_bits * (double)host_bit_fx);
    int tx_state = -1; uint64_t tx_sample_fx = 0; unsigned tx_bits = 0;
    int rx_bit = -1; uint64_t rx_edge_fx = 0, rx_free_fx = 0; unsigned rx_byte = 0;
    uint64_t rx_sent = 0;  // bytes the host has sent: its gap follows each burst
    bool lockstep = o.host_window > 0, download_reported = false;
    top->uart_rxd = 1;
#endif
    bool draining = false;     // --stop-at-exit: the trace ended, the UART still sends
    uint64_t drain_until = 0;
    top->reset = 1;
    int code = PASS;
    std::string why = "the DUT raised halt";
    for (;; cycle++) {
        if (cycle == 8) top->reset = 0;
        top->clk = 0;
        top->eval();
        top->clk = 1;
        top->eval();
#ifdef BENCH_TRACE
        if (vcd && cycle >= o.trace_from && cycle <= o.trace_to) vcd->dump((vluint64_t)cycle * 2);
#endif
#ifdef HAS_MEM
        top->mem_ready = 0;
        if (mem_pending) {
            if (mem_wait-- == 0) {
                if (mem_pending == 1) top->mem_rdata = mem[mem_addr];
                else mem[mem_addr] = mem_data;
                top->mem_ready = 1;
                mem_pending = 0;
            }
        } else if (top->mem_rd || top->mem_wr) {
            mem_addr = top->mem_addr;
            if (mem_addr >= mem.size()) {
                code = DUT_ERROR;
                why = "memory access at word " + std::to_string(mem_addr) + ", beyond --mem-words " + std::to_string(mem.size());
                break;
            }
            mem_pending = top->mem_rd ? 1 : 2;
            mem_data = top->mem_wdata;
            mem_wait = top->mem_rd ? o.read_wait : o.write_wait;
        }
#endif
#ifdef HAS_SRAM
        // The asynchronous SRAM chip on the DUT controller's pins, which change
        // only on the clock edge: while selected with write enable low it takes
        // the data (only the enabled bytes, if it has byte enables); while
        // selected with output enable low it drives the addressed word, which
        // the controller samples at a later edge after its own wait states.
        if (!top->sram_ncs && (!top->sram_nwe || !top->sram_noe)) {
            uint64_t a = top->sram_addr;
            if (a >= mem.size()) {
                code = DUT_ERROR;
                why = "SRAM access at word " + std::to_string(a) + ", beyond --mem-words " + std::to_string(mem.size());
                break;
            }
            if (!top->sram_nwe) {
#ifdef HAS_SRAM_NBE
                uint32_t keep = 0;
                for (int b = 0; b < 4; b++) if ((top->sram_nbe >> b) & 1) keep |= 0xffu << (8 * b);
                mem[a] = (mem[a] & keep) | (top->sram_dout & ~keep);
#else
                mem[a] = top->sram_dout;
#endif
            } else {
                top->sram_din = mem[a];
            }
        }
#endif
#ifdef HAS_UART_CHAR
        if (top->uart_tx_valid && !top->uart_tx_ready) {
            line.tx.push_back(top->uart_tx_data);
            top->uart_tx_ready = 1;
        } else {
            top->uart_tx_ready = 0;
        }
        if (top->uart_rx_valid && top->uart_rx_ready) {
            line.rx.pop_front();
            top->uart_rx_valid = 0;
        } else if (!top->uart_rx_valid && !line.rx.empty()) {
            top->uart_rx_data = line.rx.front();
            top->uart_rx_valid = 1;
        }
#endif
#ifdef HAS_UART_SERIAL
        // DUT -> host: sample txd in the middle of each bit.
        const uint64_t now_fx = cycle << 16;
        if (tx_state < 0) {
            if (!top->uart_txd) { tx_state = 0; tx_sample_fx = now_fx + host_bit_fx / 2; tx_bits = 0; }
        } else if (now_fx >= tx_sample_fx) {
            tx_sample_fx += host_bit_fx;
            if (tx_state == 0) tx_state = 1;
            else if (tx_state <= 8) { tx_bits |= (unsigned)top->uart_txd << (tx_state - 1); tx_state++; }
            else { line.tx.push_back((uint8_t)tx_bits); tx_state = -1; }
        }
        // Host -> DUT: start bit, 8 data bits LSB first, stop bit.
        // The line is free for the host's next byte and none has come: with
        // the host's window known, wait for it where it is sure to come, so
        // the download's timing is the simulation's own, not the host's.
        // The host's first byte goes at a set cycle, not when it came: by
        // LOCKSTEP_FROM the boot microcode waits for it.
        const bool may_feed = !lockstep || cycle >= LOCKSTEP_FROM;
        if (lockstep && may_feed && rx_bit < 0 && line.rx.empty() && now_fx >= rx_free_fx &&
            line.host_sends(o.host_window, o.host_refill) && !line.wait_for_host(30.0)) {
            lockstep = false;
            std::fprintf(stderr, "jopcal-bench: the host sent nothing in 30 s where its window said it would; its bytes are taken as they come\n");
        }
        if (may_feed && rx_bit < 0 && !line.rx.empty() && now_fx >= rx_free_fx) {
            rx_byte = line.rx.front(); line.rx.pop_front(); rx_bit = 0;
            rx_edge_fx = std::max(now_fx, rx_free_fx) + host_bit_fx;
        }
        if (rx_bit >= 0) {
            top->uart_rxd = rx_bit == 0 ? 0 : rx_bit <= 8 ? ((rx_byte >> (rx_bit - 1)) & 1) : 1;
            if (now_fx >= rx_edge_fx) {
                const uint64_t end = rx_edge_fx;
                rx_edge_fx += host_bit_fx;
                if (++rx_bit > 9) {
                    rx_bit = -1;
                    rx_free_fx = end + (++rx_sent % o.host_burst == 0 ? host_gap_fx : 0);
                    if (lockstep && line.rx.empty() && line.download_done() && !download_reported) {
                        download_reported = true;
                        std::fprintf(stderr, "jopcal-bench: the host's download of %llu bytes reached the DUT at cycle %llu\n",
                                     (unsigned long long)line.received, (unsigned long long)cycle);
                    }
                }
            }
        }
#endif
#ifdef HAS_TRACE_TAPS
        if (tracer.on && !tracer.ended) {
            if (top->trace_uart_wr && tracer.started) tracer.uart((uint8_t)top->trace_uart_data);
            // The cache compares the address in the cycle after `find` (state s1).
            tracer.sample(cycle, (uint32_t)top->trace_tos);
            if (tracer.lookup) { tracer.pending = true; tracer.pending_addr = (uint32_t)top->trace_mc_addr; }
            tracer.lookup = top->trace_mc_find;
            if (top->trace_bc_fetch)
            {
#ifdef HAS_CYCLE_COUNT
                uint32_t counter = (uint32_t)top->cycle_count;
#else
                uint32_t counter = (uint32_t)cycle;
#endif
                tracer.fetch(cycle, counter, (uint8_t)top->trace_bc, (uint32_t)top->trace_bc_pc, top->trace_exc, top->trace_mc_hit,
                             (uint32_t)top->trace_mc_start, 1u << (TRACE_START_W + 2), (uint32_t)top->trace_tos);
            }
            if (tracer.ended && o.stop_at_exit && !draining) {
                // Run on until the UART has sent what the program wrote.
                draining = true;
                drain_until = cycle + 24ull * o.bit_cycles;
            }
        }
#endif
#ifdef HAS_STACK_OVERFLOW
        if (top->stack_overflow && !o.past_overflow) {
            tracer.end(cycle, Tracer::OVERFLOW, TRACE_TOS_NOW);
            code = STACK_OVERFLOW;
            why = "the DUT's stack overflowed";
#ifdef HAS_TRACE_TAPS
            if (tracer.started) {
                char at[160];
                std::snprintf(at, sizeof at, " in the method whose code is at word %u, bytecode index %u", tracer.b_method,
                              (unsigned)tracer.b_pc);
                why += at;
            }
#endif
            break;
        }
#endif
        if (draining) {
#ifdef HAS_UART_SERIAL
            if (tx_state >= 0 || !top->uart_txd) drain_until = cycle + 24ull * o.bit_cycles;
#endif
            if (cycle >= drain_until) { why = "the program wrote JVM exit!"; break; }
        }
#ifdef HAS_HALT
        if (top->halt) break;
#endif
        if ((cycle & 1023) == 0) {
            line.poll();
            if (line.in_closed && line.rx.empty()) { why = "the host closed the line"; break; }
            if (stop_requested) { why = "stopped by the host"; break; }
            if (o.cycle_limit && cycle >= o.cycle_limit) { code = TIMEOUT; why = "cycle limit of " + std::to_string(o.cycle_limit) + " cycles reached"; break; }
            if (o.timeout_s > 0 && (cycle & 0xfffff) == 0 &&
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > o.timeout_s) {
                code = TIMEOUT; why = "wall-clock timeout of " + std::to_string((int)o.timeout_s) + " s"; break;
            }
        } else if (!line.tx.empty() && line.tx.back() == '\n') {
            line.flush();
        }
    }
    line.flush();
    tracer.end(cycle, Tracer::STOPPED, TRACE_TOS_NOW);
    if (tracer.events) fclose(tracer.events);
    if (!o.methods.empty()) tracer.write_methods(o.methods);
#ifdef BENCH_TRACE
    if (vcd) vcd->close();
#endif
    top->final();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string tap;
#ifdef HAS_CYCLE_COUNT
    tap = ", DUT cycle counter " + std::to_string((unsigned long long)top->cycle_count);
#endif
    std::fprintf(stderr, "jopcal-bench: %s after %llu cycles in %.3f s%s\n", why.c_str(), (unsigned long long)cycle, s, tap.c_str());
    return code;
}
