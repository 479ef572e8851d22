//! A small trace.dat writer for tests, benches and fuzz seeds, written from the layout
//! trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5) document (trace-cmd 3.4) and from the kernel's
//! ring-buffer page and record layout: the reader is checked against files built here by a
//! second hand, not against its own output.
//!
//! The event formats are written in the kernel's `format` file shape; their field layouts are
//! those of a 64-bit Linux 6.x kernel (ids are this writer's own).

#![allow(dead_code)]

use std::io::Write;

/// A codec of a v7 file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zip {
    Zlib,
    Zstd,
}

impl Zip {
    pub fn name(self) -> &'static str {
        match self {
            Zip::Zlib => "zlib",
            Zip::Zstd => "zstd",
        }
    }

    pub fn compress(self, data: &[u8]) -> Vec<u8> {
        match self {
            Zip::Zlib => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                e.write_all(data).unwrap();
                e.finish().unwrap()
            }
            Zip::Zstd => {
                ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
            }
        }
    }
}

/// Event ids of [`formats`].
pub mod id {
    pub const PRINT: u16 = 5;
    pub const CPU_IDLE: u16 = 10;
    pub const CPU_FREQUENCY: u16 = 11;
    pub const SCHED_SWITCH: u16 = 12;
    pub const SCHED_WAKEUP: u16 = 13;
    pub const HRTIMER_START: u16 = 14;
    pub const HRTIMER_EXPIRE_ENTRY: u16 = 15;
    pub const IRQ_HANDLER_ENTRY: u16 = 16;
    pub const IPI_RAISE: u16 = 17;
    pub const IPI_ENTRY: u16 = 18;
    pub const TICK_STOP: u16 = 19;
    pub const CPU_IDLE_MISS: u16 = 20;
    pub const TIMER_START: u16 = 21;
    pub const SCHED_WAKING: u16 = 22;
    pub const SCHED_LOAD_SE: u16 = 30;
}

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

fn format(name: &str, id: u16, fields: &str, print: &str) -> String {
    format!("name: {name}\nID: {id}\nformat:\n{COMMON}{fields}\nprint fmt: {print}\n")
}

/// The `ftrace` system's formats (here only `print`).
pub fn ftrace_formats() -> Vec<String> {
    vec![format(
        "print",
        id::PRINT,
        "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
         \tfield:char buf[];\toffset:16;\tsize:0;\tsigned:1;\n",
        "\"%ps: %s\", (void *)REC->ip, REC->buf",
    )]
}

/// Event systems and their formats.
pub fn event_formats() -> Vec<(String, Vec<String>)> {
    let f = |s: &str| s.to_string();
    vec![
        (
            f("power"),
            vec![
                format(
                    "cpu_idle",
                    id::CPU_IDLE,
                    "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\
                     \tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
                    "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id",
                ),
                format(
                    "cpu_frequency",
                    id::CPU_FREQUENCY,
                    "\tfield:u32 state;\toffset:8;\tsize:4;\tsigned:0;\n\
                     \tfield:u32 cpu_id;\toffset:12;\tsize:4;\tsigned:0;\n",
                    "\"state=%lu cpu_id=%lu\", (unsigned long)REC->state, (unsigned long)REC->cpu_id",
                ),
                format(
                    "cpu_idle_miss",
                    id::CPU_IDLE_MISS,
                    "\tfield:u32 cpu_id;\toffset:8;\tsize:4;\tsigned:0;\n\
                     \tfield:u32 state;\toffset:12;\tsize:4;\tsigned:0;\n\
                     \tfield:bool below;\toffset:16;\tsize:1;\tsigned:0;\n",
                    "\"cpu_id=%lu state=%lu type=%s\", (unsigned long)REC->cpu_id, \
                     (unsigned long)REC->state, (REC->below)?\"below\":\"above\"",
                ),
            ],
        ),
        (
            f("sched"),
            vec![
                format(
                    "sched_switch",
                    id::SCHED_SWITCH,
                    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
                     \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
                     \tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
                     \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
                     \tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
                     \tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
                     \tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n",
                    "\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s \
                     next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, \
                     (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | \
                     0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? \
                     __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | \
                     0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) \
                     - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \
                     \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, \
                     { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & \
                     ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | \
                     0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", \
                     REC->next_comm, REC->next_pid, REC->next_prio",
                ),
                format(
                    "sched_wakeup",
                    id::SCHED_WAKEUP,
                    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
                     \tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
                     \tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\
                     \tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n",
                    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, \
                     REC->target_cpu",
                ),
                // The same event class as sched_wakeup (include/trace/events/sched.h).
                format(
                    "sched_waking",
                    id::SCHED_WAKING,
                    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
                     \tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\
                     \tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\
                     \tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n",
                    "\"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, \
                     REC->target_cpu",
                ),
                format(
                    "sched_load_se",
                    id::SCHED_LOAD_SE,
                    "\tfield:int cpu;\toffset:8;\tsize:4;\tsigned:1;\n",
                    "\"cpu=%d\", REC->cpu",
                ),
            ],
        ),
        (
            f("timer"),
            vec![
                format(
                    "hrtimer_start",
                    id::HRTIMER_START,
                    "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n\
                     \tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n\
                     \tfield:s64 expires;\toffset:24;\tsize:8;\tsigned:1;\n\
                     \tfield:s64 softexpires;\toffset:32;\tsize:8;\tsigned:1;\n\
                     \tfield:enum hrtimer_mode mode;\toffset:40;\tsize:4;\tsigned:0;\n",
                    "\"hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s\", \
                     REC->hrtimer, REC->function, (unsigned long long) REC->expires, \
                     (unsigned long long) REC->softexpires, REC->mode",
                ),
                format(
                    "hrtimer_expire_entry",
                    id::HRTIMER_EXPIRE_ENTRY,
                    "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n\
                     \tfield:s64 now;\toffset:16;\tsize:8;\tsigned:1;\n\
                     \tfield:void * function;\toffset:24;\tsize:8;\tsigned:0;\n",
                    "\"hrtimer=%p function=%ps now=%llu\", REC->hrtimer, REC->function, \
                     (unsigned long long) REC->now",
                ),
                format(
                    "timer_start",
                    id::TIMER_START,
                    "\tfield:void * timer;\toffset:8;\tsize:8;\tsigned:0;\n\
                     \tfield:void * function;\toffset:16;\tsize:8;\tsigned:0;\n\
                     \tfield:unsigned long expires;\toffset:24;\tsize:8;\tsigned:0;\n\
                     \tfield:unsigned long now;\toffset:32;\tsize:8;\tsigned:0;\n\
                     \tfield:unsigned int flags;\toffset:40;\tsize:4;\tsigned:0;\n",
                    "\"timer=%p function=%ps expires=%lu [timeout=%ld] flags=%u\", REC->timer, \
                     REC->function, REC->expires, (long)REC->expires - REC->now, REC->flags",
                ),
                format(
                    "tick_stop",
                    id::TICK_STOP,
                    "\tfield:int success;\toffset:8;\tsize:4;\tsigned:1;\n\
                     \tfield:int dependency;\toffset:12;\tsize:4;\tsigned:1;\n",
                    "\"success=%d dependency=%s\", REC->success, __print_symbolic(REC->dependency, \
                     { 0, \"NONE\" }, { (1 << 0), \"POSIX_TIMER\" }, { (1 << 1), \"PERF_EVENTS\" }, \
                     { (1 << 2), \"SCHED\" }, { (1 << 3), \"CLOCK_UNSTABLE\" }, { (1 << 4), \
                     \"RCU\" }, { (1 << 5), \"RCU_EXP\" })",
                ),
            ],
        ),
        (
            f("irq"),
            vec![format(
                "irq_handler_entry",
                id::IRQ_HANDLER_ENTRY,
                "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n\
                 \tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:1;\n",
                "\"irq=%d name=%s\", REC->irq, __get_str(name)",
            )],
        ),
        (
            f("ipi"),
            vec![
                format(
                    "ipi_raise",
                    id::IPI_RAISE,
                    "\tfield:__data_loc unsigned long[] target_cpus;\toffset:8;\tsize:4;\tsigned:0;\n\
                     \tfield:const char * reason;\toffset:16;\tsize:8;\tsigned:0;\n",
                    "\"target_mask=%s (%s)\", __get_bitmask(target_cpus), REC->reason",
                ),
                format(
                    "ipi_entry",
                    id::IPI_ENTRY,
                    "\tfield:const char * reason;\toffset:8;\tsize:8;\tsigned:0;\n",
                    "\"(%s)\", REC->reason",
                ),
            ],
        ),
    ]
}

/// The `header_page` a 64-bit kernel writes for pages of `page_size` bytes.
pub fn header_page(page_size: u32) -> String {
    format!(
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
         \tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
         \tfield: char data;\toffset:16;\tsize:{};\tsigned:0;\n",
        page_size - 16
    )
}

pub const HEADER_EVENT: &str = "# compressed entry header\n\
\ttype_len    :    5 bits\n\
\ttime_delta  :   27 bits\n\
\tarray       :   32 bits\n\n\
\tpadding     : type == 29\n\
\ttime_extend : type == 30\n\
\ttime_stamp : type == 31\n\
\tdata max type_len  == 28\n";

/// Numbers in a file's byte order.
#[derive(Clone, Copy, Debug)]
pub struct Order {
    pub big: bool,
}

impl Order {
    pub fn n(self, v: u64, size: usize) -> Vec<u8> {
        let le = v.to_le_bytes();
        let mut b = le[..size].to_vec();
        if self.big {
            b.reverse();
        }
        b
    }
    pub fn put(self, buf: &mut [u8], at: usize, v: u64, size: usize) {
        buf[at..at + size].copy_from_slice(&self.n(v, size));
    }
}

/// A record's data: `common_type` set, the rest zero, numbers placed by [`Order::put`].
pub fn payload(order: Order, id: u16, size: usize) -> Vec<u8> {
    let mut p = vec![0u8; size];
    order.put(&mut p, 0, u64::from(id), 2);
    p
}

/// One ring-buffer page being filled.
pub struct Page {
    pub order: Order,
    pub ts: u64,
    pub body: Vec<u8>,
    /// Events lost before this page: `Some(Some(n))` with the count stored, `Some(None)`
    /// without.
    pub lost: Option<Option<u64>>,
}

impl Page {
    pub fn new(order: Order, ts: u64) -> Page {
        Page {
            order,
            ts,
            body: Vec::new(),
            lost: None,
        }
    }

    fn header(&mut self, type_len: u32, delta: u32) {
        assert!(type_len < 32 && delta < 1 << 27);
        let w = if self.order.big {
            type_len << 27 | delta
        } else {
            delta << 5 | type_len
        };
        let b = self.order.n(u64::from(w), 4);
        self.body.extend_from_slice(&b);
    }

    /// A data record `delta` after the previous one (its data padded to whole words).
    pub fn record(&mut self, delta: u32, data: &[u8]) -> &mut Page {
        let words = data.len().div_ceil(4);
        if words <= 28 {
            self.header(words as u32, delta);
        } else {
            self.header(0, delta);
            let len = self.order.n((words * 4 + 4) as u64, 4);
            self.body.extend_from_slice(&len);
        }
        self.body.extend_from_slice(data);
        self.body
            .resize(self.body.len() + (words * 4 - data.len()), 0);
        self
    }

    /// A time extend of `delta` nanoseconds (at least 2^27).
    pub fn extend(&mut self, delta: u64) -> &mut Page {
        self.header(30, (delta & ((1 << 27) - 1)) as u32);
        let high = self.order.n(delta >> 27, 4);
        self.body.extend_from_slice(&high);
        self
    }

    /// An absolute timestamp (its low 59 bits).
    pub fn absolute(&mut self, ts: u64) -> &mut Page {
        self.header(31, (ts & ((1 << 27) - 1)) as u32);
        let high = self.order.n(ts >> 27 & 0xffff_ffff, 4);
        self.body.extend_from_slice(&high);
        self
    }

    /// A discarded record: padding of `len` bytes that still moves time by `delta`.
    pub fn discarded(&mut self, delta: u32, len: u32) -> &mut Page {
        self.header(29, delta);
        let l = self.order.n(u64::from(len), 4);
        self.body.extend_from_slice(&l);
        self.body.resize(self.body.len() + len as usize - 4, 0);
        self
    }

    /// The page's bytes: header (8-byte commit word), records, the lost count, zero fill.
    pub fn bytes(&self, page_size: usize) -> Vec<u8> {
        let mut commit = self.body.len() as u64;
        if let Some(stored) = self.lost {
            commit |= 1 << 31;
            if stored.is_some() {
                commit |= 1 << 30;
            }
        }
        let mut p = self.order.n(self.ts, 8);
        p.extend(self.order.n(commit, 8));
        p.extend_from_slice(&self.body);
        if let Some(Some(n)) = self.lost {
            p.extend(self.order.n(n, 8));
        }
        assert!(p.len() <= page_size, "page overflows");
        p.resize(page_size, 0);
        p
    }
}

/// A whole file.
pub struct Dat {
    pub version: u32,
    pub order: Order,
    pub page_size: u32,
    /// v7 only.
    pub zip: Option<Zip>,
    pub ftrace: Vec<String>,
    pub systems: Vec<(String, Vec<String>)>,
    pub kallsyms: String,
    pub printk: String,
    pub clock: String,
    pub cpus: u32,
    /// Per CPU with data: its pages.
    pub data: Vec<(u32, Vec<Vec<u8>>)>,
    pub ts_offset: Option<i64>,
    /// v7: more CPUs whose BUFFER entries point at the first CPU's data.
    pub alias_cpus: u32,
}

impl Dat {
    pub fn new(version: u32, big: bool) -> Dat {
        Dat {
            version,
            order: Order { big },
            page_size: 4096,
            zip: None,
            ftrace: ftrace_formats(),
            systems: event_formats(),
            kallsyms: "ffffffc010000000 T _text\n\
                       ffffffc010123450 t tick_nohz_handler\n\
                       ffffffc010123400 T hrtimer_wakeup\n\
                       ffffffc010200000 t process_timeout\n"
                .to_string(),
            printk: "0xffffffc011000000 : \"Rescheduling interrupts\"\n\
                     0xffffffc011000020 : \"Function call interrupts\"\n"
                .to_string(),
            clock: "mono".to_string(),
            cpus: 4,
            data: Vec::new(),
            ts_offset: None,
            alias_cpus: 0,
        }
    }

    pub fn page(&self, ts: u64) -> Page {
        Page::new(self.order, ts)
    }

    fn n(&self, v: u64, size: usize) -> Vec<u8> {
        self.order.n(v, size)
    }

    fn head(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"\x17\x08\x44tracing");
        out.extend_from_slice(format!("{}\0", self.version).as_bytes());
        out.push(u8::from(self.order.big));
        out.push(8);
        out.extend(self.n(u64::from(self.page_size), 4));
    }

    fn header_info(&self) -> Vec<u8> {
        let mut b = b"header_page\0".to_vec();
        let hp = header_page(self.page_size);
        b.extend(self.n(hp.len() as u64, 8));
        b.extend_from_slice(hp.as_bytes());
        b.extend_from_slice(b"header_event\0");
        b.extend(self.n(HEADER_EVENT.len() as u64, 8));
        b.extend_from_slice(HEADER_EVENT.as_bytes());
        b
    }

    fn ftrace_info(&self) -> Vec<u8> {
        let mut b = self.n(self.ftrace.len() as u64, 4);
        for f in &self.ftrace {
            b.extend(self.n(f.len() as u64, 8));
            b.extend_from_slice(f.as_bytes());
        }
        b
    }

    fn events_info(&self) -> Vec<u8> {
        let mut b = self.n(self.systems.len() as u64, 4);
        for (system, formats) in &self.systems {
            b.extend_from_slice(system.as_bytes());
            b.push(0);
            b.extend(self.n(formats.len() as u64, 4));
            for f in formats {
                b.extend(self.n(f.len() as u64, 8));
                b.extend_from_slice(f.as_bytes());
            }
        }
        b
    }

    fn sized4(&self, text: &str) -> Vec<u8> {
        let mut b = self.n(text.len() as u64, 4);
        b.extend_from_slice(text.as_bytes());
        b
    }

    fn option(&self, id: u16, data: &[u8]) -> Vec<u8> {
        let mut b = self.n(u64::from(id), 2);
        b.extend(self.n(data.len() as u64, 4));
        b.extend_from_slice(data);
        b
    }

    fn pad(&self, out: &mut Vec<u8>) {
        let ps = self.page_size as usize;
        out.resize(out.len().div_ceil(ps) * ps, 0);
    }

    /// The file's bytes.
    pub fn bytes(&self) -> Vec<u8> {
        if self.version == 6 {
            self.v6()
        } else {
            self.v7()
        }
    }

    fn v6(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.head(&mut out);
        out.extend(self.header_info());
        out.extend(self.ftrace_info());
        out.extend(self.events_info());
        out.extend(self.sized4(&self.kallsyms));
        out.extend(self.sized4(&self.printk));
        let cmdlines = "1 init\n";
        out.extend(self.n(cmdlines.len() as u64, 8));
        out.extend_from_slice(cmdlines.as_bytes());
        out.extend(self.n(u64::from(self.cpus), 4));
        out.extend_from_slice(b"options  \0");
        let clock = format!("[{}] global counter\n\0", self.clock);
        out.extend(self.option(4, clock.as_bytes()));
        if let Some(o) = self.ts_offset {
            out.extend(self.option(7, format!("{o}\0").as_bytes()));
        }
        out.extend(self.n(0, 2));
        out.extend_from_slice(b"flyrecord\0");
        let table_at = out.len();
        out.resize(table_at + 16 * self.cpus as usize, 0);
        self.pad(&mut out);
        for (cpu, pages) in &self.data {
            let at = out.len() as u64;
            for p in pages {
                out.extend_from_slice(p);
            }
            let size = out.len() as u64 - at;
            let slot = table_at + 16 * *cpu as usize;
            out[slot..slot + 8].copy_from_slice(&self.n(at, 8));
            out[slot + 8..slot + 16].copy_from_slice(&self.n(size, 8));
        }
        out
    }

    /// A v7 section: header (id, flags, description, size) and content, compressed as one
    /// block when the file has a codec.
    fn section(&self, out: &mut Vec<u8>, id: u16, content: &[u8]) -> u64 {
        let at = out.len() as u64;
        out.extend(self.n(u64::from(id), 2));
        out.extend(self.n(u64::from(self.zip.is_some()), 2));
        out.extend(self.n(0, 4));
        let body = match self.zip {
            None => content.to_vec(),
            Some(z) => {
                let c = z.compress(content);
                let mut b = self.n(c.len() as u64, 4);
                b.extend(self.n(content.len() as u64, 4));
                b.extend(c);
                b
            }
        };
        out.extend(self.n(body.len() as u64, 8));
        out.extend(body);
        at
    }

    fn v7(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.head(&mut out);
        match self.zip {
            Some(z) => out.extend_from_slice(format!("{}\0{}\0", z.name(), "1.0").as_bytes()),
            None => out.extend_from_slice(b"none\0\0"),
        }
        let options_slot = out.len();
        out.extend(self.n(0, 8));
        let hi = self.header_info();
        let sections = [
            (16u16, self.section(&mut out, 16, &hi)),
            (17, self.section(&mut out, 17, &self.ftrace_info())),
            (18, self.section(&mut out, 18, &self.events_info())),
            (19, self.section(&mut out, 19, &self.sized4(&self.kallsyms))),
            (20, self.section(&mut out, 20, &self.sized4(&self.printk))),
        ];
        // The flyrecord section: its header, then each CPU's data page-aligned.
        let fly_at = out.len() as u64;
        out.extend(self.n(3, 2));
        out.extend(self.n(u64::from(self.zip.is_some()), 2));
        out.extend(self.n(0, 4));
        let fly_size_slot = out.len();
        out.extend(self.n(0, 8));
        let mut cpus = Vec::new();
        for (cpu, pages) in &self.data {
            self.pad(&mut out);
            let at = out.len() as u64;
            match self.zip {
                None => pages.iter().for_each(|p| out.extend_from_slice(p)),
                Some(z) => {
                    let chunks: Vec<&[Vec<u8>]> = pages.chunks(10).collect();
                    out.extend(self.n(chunks.len() as u64, 4));
                    for chunk in chunks {
                        let raw: Vec<u8> = chunk.concat();
                        let c = z.compress(&raw);
                        out.extend(self.n(c.len() as u64, 4));
                        out.extend(self.n(raw.len() as u64, 4));
                        out.extend(c);
                    }
                }
            }
            cpus.push((*cpu, at, out.len() as u64 - at));
        }
        let fly_size = out.len() - fly_size_slot - 8;
        out[fly_size_slot..fly_size_slot + 8].copy_from_slice(&self.n(fly_size as u64, 8));
        // The options section, last.
        let mut opts = Vec::new();
        for (id, at) in sections {
            opts.extend(self.option(id, &self.n(at, 8)));
        }
        opts.extend(self.option(8, &self.n(u64::from(self.cpus), 4)));
        if let Some(o) = self.ts_offset {
            opts.extend(self.option(7, format!("{o}\0").as_bytes()));
        }
        let mut buffer = self.n(fly_at, 8);
        buffer.push(0);
        buffer.extend_from_slice(self.clock.as_bytes());
        buffer.push(0);
        buffer.extend(self.n(u64::from(self.page_size), 4));
        if let Some(&(_, at, size)) = cpus.first() {
            let top = self.data.iter().map(|d| d.0).max().unwrap_or(0);
            for k in 0..self.alias_cpus {
                cpus.push((top + 1 + k, at, size));
            }
        }
        buffer.extend(self.n(cpus.len() as u64, 4));
        for (cpu, at, size) in cpus {
            buffer.extend(self.n(u64::from(cpu), 4));
            buffer.extend(self.n(at, 8));
            buffer.extend(self.n(size, 8));
        }
        opts.extend(self.option(3, &buffer));
        opts.extend(self.option(0, &self.n(0, 8)));
        let opt_at = self.section(&mut out, 0, &opts);
        out[options_slot..options_slot + 8].copy_from_slice(&self.n(opt_at, 8));
        out
    }
}
