/* Userspace stand-ins for what menu.c (v6.6 .. v6.12) takes from the kernel: the types, the
 * cpuidle structures it reads, and the helpers it calls, which return what the current
 * idle-decide step says (driver.c sets the h_* variables). Written for torpor's tests; no
 * kernel text. Used as `gcc -include stubs.h`. */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef int64_t s64;
typedef uint64_t u64;
typedef uint32_t u32;
typedef s64 ktime_t;

#define KTIME_MAX INT64_MAX
#define U64_MAX UINT64_MAX
#define NSEC_PER_USEC 1000L
#define RESIDENCY_THRESHOLD_NS (15 * NSEC_PER_USEC) /* gov.h */
#define CPUIDLE_FLAG_POLLING 1u
#define likely(x) (x)
#define unlikely(x) (x)
#define min(a, b) ((a) < (b) ? (a) : (b))
#define __init
#define postcore_initcall(f)
#define DEFINE_PER_CPU(type, name) type name
#define this_cpu_ptr(p) (p)
#define per_cpu(name, cpu) (name)
#define do_div(n, base) ({ u32 rem_ = (n) % (base); (n) /= (base); rem_; })

/* TICK_NSEC comes from the sequence's platform line. */
extern s64 h_tick_ns;
#define TICK_NSEC h_tick_ns

struct cpuidle_state {
	s64 exit_latency_ns;
	s64 target_residency_ns;
	unsigned int flags;
};
struct cpuidle_state_usage {
	unsigned long long disable;
};
struct cpuidle_driver {
	struct cpuidle_state states[10];
	int state_count;
};
struct cpuidle_device {
	int cpu;
	int last_state_idx;
	u64 last_residency_ns;
	bool poll_time_limit;
	struct cpuidle_state_usage states_usage[10];
};
struct cpuidle_governor {
	const char *name;
	int rating;
	int (*enable)(struct cpuidle_driver *, struct cpuidle_device *);
	int (*select)(struct cpuidle_driver *, struct cpuidle_device *, bool *);
	void (*reflect)(struct cpuidle_device *, int);
};

/* The step's helper values. */
extern s64 h_latency_req_ns, h_sleep_length_ns, h_delta_tick_ns;
extern bool h_tick_stopped, h_got_tick;
extern unsigned int h_nr_iowait;

static inline u64 div_u64(u64 dividend, u32 divisor) { return dividend / divisor; }
static inline u64 div64_u64(u64 dividend, u64 divisor) { return dividend / divisor; }
static inline s64 ktime_to_us(ktime_t t) { return t / NSEC_PER_USEC; }
static inline s64 cpuidle_governor_latency_req(int cpu) { (void)cpu; return h_latency_req_ns; }
static inline ktime_t tick_nohz_get_sleep_length(ktime_t *delta_next)
{
	*delta_next = h_delta_tick_ns;
	return h_sleep_length_ns;
}
static inline bool tick_nohz_tick_stopped(void) { return h_tick_stopped; }
/* Tests and clears the flag, as the kernel's does. */
static inline bool tick_nohz_idle_got_tick(void)
{
	bool got = h_got_tick;
	h_got_tick = false;
	return got;
}
static inline unsigned int nr_iowait_cpu(int cpu) { (void)cpu; return h_nr_iowait; }
static inline int cpuidle_register_governor(struct cpuidle_governor *gov) { (void)gov; return 0; }
