/* Drives menu.c's select/reflect through one idle-decide sequence (docs/idle-decide.md), read
 * as the numbers to_text.py writes, and prints the decisions as idle-decide's JSON lines.
 * Build: sed '/^#include/d' menu.c > menu-noinc.c; gcc -include stubs.h -o driver driver.c */
#include <stdio.h>

s64 h_tick_ns, h_latency_req_ns, h_sleep_length_ns, h_delta_tick_ns;
bool h_tick_stopped, h_got_tick;
unsigned int h_nr_iowait;

#include "menu-noinc.c"

int main(void)
{
	static struct cpuidle_driver drv;
	static struct cpuidle_device dev;
	long long tick, sleep, delta_tick, latency, entered, residency;
	int count, stopped, iowait, disabled_mask, poll_limit, got_tick, step = 0;

	if (scanf("%lld %d", &tick, &count) != 2)
		return 2;
	h_tick_ns = tick;
	drv.state_count = count;
	for (int i = 0; i < count; i++) {
		long long exit_ns, target_ns;
		int polling;

		if (scanf("%lld %lld %d", &exit_ns, &target_ns, &polling) != 3)
			return 2;
		drv.states[i].exit_latency_ns = exit_ns;
		drv.states[i].target_residency_ns = target_ns;
		drv.states[i].flags = polling ? CPUIDLE_FLAG_POLLING : 0;
	}
	menu_enable_device(&drv, &dev);
	while (scanf("%lld %lld %lld %d %d %d %lld %lld %d %d", &sleep, &delta_tick, &latency,
		     &stopped, &iowait, &disabled_mask, &entered, &residency, &poll_limit,
		     &got_tick) == 10) {
		bool stop_tick = true;
		int idx;

		h_sleep_length_ns = sleep;
		h_delta_tick_ns = delta_tick;
		h_latency_req_ns = latency;
		h_tick_stopped = stopped;
		h_nr_iowait = iowait;
		for (int i = 0; i < count; i++)
			dev.states_usage[i].disable = (disabled_mask >> i) & 1;
		idx = menu_select(&drv, &dev, &stop_tick);
		printf("{\"step\": %d, \"idx\": %d, \"stop_tick\": %s}\n", step++, idx,
		       stop_tick ? "true" : "false");
		/* -2: null, the selected state was entered; -1: the driver rejected it. */
		if (entered == -2)
			entered = idx;
		if (got_tick)
			h_got_tick = true;
		if (entered < 0) {
			dev.last_residency_ns = 0;
			continue;
		}
		dev.last_residency_ns = (u64)residency;
		if (drv.states[entered].flags & CPUIDLE_FLAG_POLLING)
			dev.poll_time_limit = poll_limit;
		menu_reflect(&dev, (int)entered);
	}
	return 0;
}
