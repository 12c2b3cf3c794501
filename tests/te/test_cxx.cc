/*
 * test_cxx.cc - tracec/track_event.h from C++17: every public track-event
 * macro expands in a C++ translation unit (built with -std=c++17 -pedantic
 * -Wall -Wextra), and the trace it writes is what the trace processor shows:
 * instants, slices, counters, flows, debug annotations (nested too), tracks,
 * timestamps, dynamic names and typed events with a generated wrapper
 * (BEGIN, END and instant, literal and dynamic names).
 */
#include <criterion/criterion.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "my_events.tracec.h"
#include "tracec/track_event.h"
extern "C" {
#include "te_util.h"
}

#define CXX_CATEGORIES(C) C(cx, "cxx") C(cx_off, "cxx_off")
TRACEC_TE_DECLARE_CATEGORIES(CXX_CATEGORIES)
TRACEC_TE_DEFINE_CATEGORIES(CXX_CATEGORIES)

namespace {

void expect_tp(const char *trace, const char *sql, const char *want) {
    char *out = nullptr;
    if (!te_tp(trace, sql, &out)) return;
    cr_assert(out != nullptr && std::strcmp(out, want) == 0, "trace processor, %s\n--- got\n%s--- want\n%s", sql,
              out ? out : "", want);
    std::free(out);
}

tracec_session *start(const char *path) {
    static const char *const cats[] = {"cxx"};
    tracec_session_config cfg = TRACEC_SESSION_CONFIG_INIT;
    tracec_session *s = nullptr;
    cfg.path = path;
    cfg.categories = cats;
    cfg.num_categories = 1;
    cfg.process_name = "te_cxx";
    tracec_status_t st = tracec_session_start(&cfg, &s);
    cr_assert_eq(st, TRACEC_STATUS_SUCCESS, "start: %s", tracec_status_str(st));
    return s;
}

/* Every macro of the general form, with explicit timestamps. */
void write_general(void) {
    std::string dyn = "dyn ";
    dyn += std::to_string(7);
    const char *none = nullptr;
    int x = 0;
    TRACEC_TE(cx, TRACEC_TE_SLICE_BEGIN("outer"), TRACEC_TE_TIMESTAMP(1000), TRACEC_TE_ARG_INT("i", -5),
              TRACEC_TE_ARG_UINT("u", 7u), TRACEC_TE_ARG_DOUBLE("d", 1.5), TRACEC_TE_ARG_BOOL("flag", true),
              TRACEC_TE_ARG_STRING("s", "str"), TRACEC_TE_ARG_POINTER("p", reinterpret_cast<void *>(0x1234)),
              TRACEC_TE_ARG_JSON("j", "{\"a\":1}"), TRACEC_TE_ARG_STRING("none", none), TRACEC_TE_FLOW(9));
    TRACEC_TE(cx, TRACEC_TE_INSTANT("inner"), TRACEC_TE_TIMESTAMP(1100), TRACEC_TE_ARG_DICT("req"),
              TRACEC_TE_ARG_STRING("url", "/x"), TRACEC_TE_ARG_ARRAY("tries"), TRACEC_TE_ARG_INT("", 10),
              TRACEC_TE_ARG_INT("", 20), TRACEC_TE_ARG_END(), TRACEC_TE_ARG_END());
    TRACEC_TE(cx, TRACEC_TE_SLICE_BEGIN_DYN(dyn.c_str()), TRACEC_TE_TIMESTAMP(1200), TRACEC_TE_TERMINATING_FLOW(9));
    TRACEC_TE(cx, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(1300));
    TRACEC_TE(cx, TRACEC_TE_INSTANT_DYN(dyn.c_str()), TRACEC_TE_TIMESTAMP(1400));
    TRACEC_TE(cx, TRACEC_TE_INSTANT("renamed"), TRACEC_TE_DYNAMIC_NAME(dyn.c_str()), TRACEC_TE_TIMESTAMP(1500));
    TRACEC_TE(cx, TRACEC_TE_SLICE_END(), TRACEC_TE_TIMESTAMP(2000));
    TRACEC_TE(cx, TRACEC_TE_COUNTER_INT("queue", 3), TRACEC_TE_TIMESTAMP(1100));
    TRACEC_TE(cx, TRACEC_TE_COUNTER_DOUBLE("ratio", 0.25), TRACEC_TE_TIMESTAMP(1200));
    cr_assert_eq(tracec_te_define_track(4242, "cxx track", 0), TRACEC_STATUS_SUCCESS);
    cr_assert_eq(tracec_te_define_track(4243, "cxx counter", 1), TRACEC_STATUS_SUCCESS);
    TRACEC_TE(cx, TRACEC_TE_INSTANT("on track"), TRACEC_TE_TRACK(4242), TRACEC_TE_TIMESTAMP(1600));
    TRACEC_TE(cx, TRACEC_TE_COUNTER_INT("mem", 512), TRACEC_TE_TRACK(4243), TRACEC_TE_TIMESTAMP(1700));
    TRACEC_TE(cx_off, TRACEC_TE_INSTANT("off"), TRACEC_TE_ARG_INT("x", ++x));
    cr_assert_eq(x, 0, "arguments of a disabled event are not evaluated");
}

}  // namespace

Test(te_cxx, every_macro_of_the_general_form) {
    const char *path = te_path("cxx_general.pftrace");
    tracec_session *s = start(path);
    cr_assert(TRACEC_TE_ENABLED(cx));
    cr_assert(!TRACEC_TE_ENABLED(cx_off));
    cr_assert_str_eq(TRACEC_TE_CATEGORY(cx)->c.name, "cxx");
    write_general();
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = nullptr;
    cr_assert_eq(te_check(path, nullptr, &sum), 0, "check_trace.py:\n%s", sum ? sum : "");
    std::free(sum);
    char *bad = te_tp_bad_stats(path);
    cr_assert_str_eq(bad, "", "error / data_loss stats:\n%s", bad);
    std::free(bad);
    expect_tp(path, "select ts, dur, name, category, depth from slice order by ts;",
              "\"ts\",\"dur\",\"name\",\"category\",\"depth\"\n"
              "1000,1000,\"outer\",\"cxx\",0\n"
              "1100,0,\"inner\",\"cxx\",1\n"
              "1200,100,\"dyn 7\",\"cxx\",1\n"
              "1400,0,\"dyn 7\",\"cxx\",1\n"
              "1500,0,\"dyn 7\",\"cxx\",1\n"
              "1600,0,\"on track\",\"cxx\",0\n");
    expect_tp(path,
              "select s.name, a.key, a.int_value, a.string_value, a.real_value from slice s "
              "join args a using(arg_set_id) where a.key like 'debug.%' order by s.ts, a.key;",
              "\"name\",\"key\",\"int_value\",\"string_value\",\"real_value\"\n"
              "\"outer\",\"debug.d\",\"[NULL]\",\"[NULL]\",1.500000\n"
              "\"outer\",\"debug.flag\",1,\"[NULL]\",\"[NULL]\"\n"
              "\"outer\",\"debug.i\",-5,\"[NULL]\",\"[NULL]\"\n"
              "\"outer\",\"debug.j.a\",1,\"[NULL]\",\"[NULL]\"\n"
              "\"outer\",\"debug.p\",4660,\"[NULL]\",\"[NULL]\"\n"
              "\"outer\",\"debug.s\",\"[NULL]\",\"str\",\"[NULL]\"\n"
              "\"outer\",\"debug.u\",7,\"[NULL]\",\"[NULL]\"\n"
              "\"inner\",\"debug.req.tries[0]\",10,\"[NULL]\",\"[NULL]\"\n"
              "\"inner\",\"debug.req.tries[1]\",20,\"[NULL]\",\"[NULL]\"\n"
              "\"inner\",\"debug.req.url\",\"[NULL]\",\"/x\",\"[NULL]\"\n");
    expect_tp(path,
              "select t.name, c.ts, c.value from counter c join counter_track t on c.track_id = t.id "
              "order by t.name, c.ts;",
              "\"name\",\"ts\",\"value\"\n"
              "\"cxx counter\",1700,512.000000\n"
              "\"queue\",1100,3.000000\n"
              "\"ratio\",1200,0.250000\n");
    expect_tp(path,
              "select so.name as src, si.name as dst from flow f join slice so on f.slice_out = so.id "
              "join slice si on f.slice_in = si.id;",
              "\"src\",\"dst\"\n\"outer\",\"dyn 7\"\n");
}

Test(te_cxx, every_shorthand_and_typed_form) {
    const char *path = te_path("cxx_short.pftrace");
    tracec_session *s = start(path);
    std::string name = "typed dyn";
    int ran = 0;
    TRACEC_SLICE_BEGIN(cx, "short slice");
    TRACEC_INSTANT(cx, "short instant");
    TRACEC_INSTANT_DYN(cx, name.c_str());
    TRACEC_COUNTER(cx, "short counter", 5);
    TRACEC_COUNTER_DOUBLE(cx, "short double", 2.5);
    TRACEC_SLICE_BEGIN_DYN(cx, name.c_str());
    TRACEC_SLICE_END(cx);
    TRACEC_SLICE_END(cx);
    TRACEC_EVENT_AS(cx, my_app_MyEvent, ev, "typed") {
        my_app_MyEvent_set_cstr_custom_string(&ev, "hello");
        my_app_MyEvent_set_mood(&ev, my_app_MOOD_BUSY);
        ran++;
    }
    TRACEC_EVENT_AS_DYN(cx, my_app_MyEvent, ev, name.c_str()) {
        my_app_MyEvent_set_custom_counter(&ev, 1);
        ran++;
    }
    TRACEC_SLICE_BEGIN_AS(cx, my_app_MyEvent, ev, "typed slice") {
        my_app_MyEvent_set_custom_counter(&ev, 7);
        ran++;
    }
    TRACEC_SLICE_END_AS(cx, my_app_MyEvent, ev) {
        my_app_MyEvent_set_cstr_custom_string(&ev, "at the end");
        ran++;
    }
    TRACEC_SLICE_BEGIN_AS_DYN(cx, my_app_MyEvent, ev, name.c_str()) { ran++; }
    TRACEC_SLICE_END(cx);
    TRACEC_EVENT_AS(cx_off, my_app_MyEvent, ev, "off") { ran += 100; }
    cr_assert_eq(ran, 5);
    cr_assert_eq(tracec_session_stop(s), TRACEC_STATUS_SUCCESS);
    char *sum = nullptr;
    cr_assert_eq(te_check(path, nullptr, &sum), 0, "check_trace.py:\n%s", sum ? sum : "");
    std::free(sum);
    expect_tp(path, "select name, dur > 0 as long, depth from slice order by ts, depth;",
              "\"name\",\"long\",\"depth\"\n"
              "\"short slice\",1,0\n"
              "\"short instant\",0,1\n"
              "\"typed dyn\",0,1\n"
              "\"typed dyn\",1,1\n"
              "\"typed\",0,0\n"
              "\"typed dyn\",0,0\n"
              "\"typed slice\",1,0\n"
              "\"typed dyn\",1,0\n");
    expect_tp(path,
              "select s.name, a.key, a.int_value, a.string_value from slice s join args a using(arg_set_id) "
              "where a.key not like 'event.%' and a.key not like 'legacy%' and a.key not like 'debug.%' "
              "order by s.ts, a.key;",
              "\"name\",\"key\",\"int_value\",\"string_value\"\n"
              "\"typed\",\"custom_string\",\"[NULL]\",\"hello\"\n"
              "\"typed\",\"mood\",\"[NULL]\",\"MOOD_BUSY\"\n"
              "\"typed dyn\",\"custom_counter\",1,\"[NULL]\"\n"
              "\"typed slice\",\"custom_counter\",7,\"[NULL]\"\n"
              "\"typed slice\",\"custom_string\",\"[NULL]\",\"at the end\"\n");
    expect_tp(path,
              "select t.name, c.value from counter c join counter_track t on c.track_id = t.id order by t.name;",
              "\"name\",\"value\"\n\"short counter\",5.000000\n\"short double\",2.500000\n");
}
