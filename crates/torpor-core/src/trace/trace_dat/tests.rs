use super::format::{
    eval, parse_event_format, parse_event_header, parse_field_line, parse_page_header, print_flags,
    print_symbolic, Layout,
};

#[test]
fn constant_expressions_of_print_fmts_evaluate_as_c_does() {
    assert_eq!(eval("4096-1"), Some(4095));
    assert_eq!(eval("(1 << 3)"), Some(8));
    // Linux 6.x's TASK_REPORT_MAX - 1: ((0x7f + 1) << 1) - 1.
    assert_eq!(
        eval("((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1)"),
        Some(0xff)
    );
    // `+` binds tighter than `<<`, which binds tighter than `&` and `|`.
    assert_eq!(eval("1 + 1 << 2"), Some(8));
    assert_eq!(eval("6 & 3 | 8"), Some(10));
    assert_eq!(eval("(unsigned long)0x10UL"), Some(16));
    assert_eq!(eval("~0 & 0xf"), Some(15));
    assert_eq!(eval("REC->x"), None);
    assert_eq!(eval("1 <<"), None);
}

#[test]
fn flag_and_symbol_tables_come_from_the_print_fmt() {
    // Linux 4.4's sched_switch (the real Juno traces' kernels print it so).
    let fmt = "\"prev_state=%s%s\", REC->prev_state & (4096-1) ? __print_flags(REC->prev_state \
               & (4096-1), \"|\", { 1, \"S\"} , { 2, \"D\" }, { 64, \"x\" }) : \"R\", \
               REC->prev_state & 4096 ? \"+\" : \"\"";
    let t = print_flags(fmt, "prev_state").unwrap();
    assert_eq!(t.mask, 4095);
    assert_eq!(t.delimiter, "|");
    assert_eq!(
        t.entries,
        vec![(1, "S".into()), (2, "D".into()), (64, "x".into())]
    );
    assert!(print_flags(fmt, "prev").is_none());
    let fmt = "\"dependency=%s\", __print_symbolic(REC->dependency, { 0, \"NONE\" }, { (1 << 2), \
               \"SCHED\" })";
    assert_eq!(
        print_symbolic(fmt, "dependency").unwrap(),
        vec![(0, "NONE".into()), (4, "SCHED".into())]
    );
}

#[test]
fn field_lines_name_their_layout() {
    let f = parse_field_line("field:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;").unwrap();
    assert_eq!(
        (f.name.as_str(), f.offset, f.size, f.layout),
        ("prev_comm", 8, 16, Layout::Array)
    );
    let f =
        parse_field_line("field:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:1;").unwrap();
    assert_eq!(
        (f.name.as_str(), f.layout, f.signed),
        ("name", Layout::DataLoc, true)
    );
    let f = parse_field_line("field: u64 timestamp;\toffset:0;\tsize:8;").unwrap();
    assert_eq!((f.name.as_str(), f.signed), ("timestamp", false));
    let f = parse_field_line("field:const char * reason;\toffset:8;\tsize:8;\tsigned:0;").unwrap();
    assert_eq!((f.name.as_str(), f.layout), ("reason", Layout::Scalar));
    assert!(parse_field_line("field:int x;\tsize:4;").is_none());
    // A name after a character of more than one byte (found by the fuzzer).
    let f = parse_field_line("field:int \u{6dc}x;\toffset:8;\tsize:4;").unwrap();
    assert_eq!(f.name, "x");
    assert!(parse_field_line("field:int x\u{6dc};\toffset:8;\tsize:4;").is_none());
    let e = parse_event_format("name: a\nformat:\n").unwrap_err();
    assert_eq!(e, "expected an `ID:` line in the format of `a`");
}

#[test]
fn ring_buffer_headers_of_old_and_new_kernels() {
    // Kernels before 4.17 list no time_stamp type.
    let old = "\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\
               \tpadding     : type == 29\n\ttime_extend : type == 30\n\tdata max type_len  == 28\n";
    let h = parse_event_header(old).unwrap();
    assert_eq!(
        (h.padding, h.time_extend, h.time_stamp, h.data_max),
        (29, 30, None, 28)
    );
    let new = old.replace("\tdata max", "\ttime_stamp : type == 31\n\tdata max");
    assert_eq!(parse_event_header(&new).unwrap().time_stamp, Some(31));
    assert!(parse_event_header(&old.replace("5 bits", "6 bits")).is_err());
    // A 32-bit kernel's page: a 4-byte commit word, data at 12.
    let page = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
                \tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\
                \tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";
    let p = parse_page_header(page).unwrap();
    assert_eq!((p.commit, p.data_offset, p.data_size), ((8, 4), 12, 4084));
}
