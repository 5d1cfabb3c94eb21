"""Which bench processes preload the agent: background workers only, never any other bench command.

`bench` loads every app's commands module before it runs any command; the agent preloads itself
there only when the command is frappe's `worker` or `worker-pool` (edge/frappe_warm.py).
The preload itself is checked on the site (noviz_agent/tests/test_site_scale.py).
"""

from __future__ import annotations

import pytest

from noviz_agent.edge import frappe_warm

HELPER = "/srv/bench/apps/frappe/frappe/utils/bench_helper.py"


@pytest.mark.parametrize(
	("argv", "command"),
	[
		# what `bench worker --queue short,default` runs (supervisor's line on a production bench)
		([HELPER, "frappe", "worker", "--queue", "short,default"], "worker"),
		([HELPER, "frappe", "--site", "erp.example.com", "worker"], "worker"),
		([HELPER, "frappe", "--verbose", "worker-pool", "--num-workers", "4"], "worker-pool"),
	],
)
def test_a_background_worker_is_recognised_so_its_jobs_start_warm(argv, command):
	assert frappe_warm.worker_command(argv) == command


@pytest.mark.parametrize(
	"argv",
	[
		[HELPER, "frappe", "--site", "erp.example.com", "migrate"],
		# a site named like the command is the option's value, not the command
		[HELPER, "frappe", "--site", "worker", "console"],
		[HELPER, "frappe", "--site", "s", "execute", "some.method", "--args", "worker"],
		# the agent's own worker command preloads by itself, once
		[HELPER, "frappe", "noviz-agent", "worker"],
		[HELPER, "frappe"],
		["/usr/bin/gunicorn", "frappe", "worker"],
		[],
	],
)
def test_other_bench_commands_do_not_pay_for_a_preload_they_do_not_use(argv):
	assert frappe_warm.worker_command(argv) is None


def test_turn_figures_name_the_worker_mode_the_process_was_marked_with():
	assert frappe_warm.worker_mode() == frappe_warm.FORK  # RQ's default: a job forked per turn
	frappe_warm.mark_mode(frappe_warm.NO_FORK)
	try:
		assert frappe_warm.worker_mode() == "no-fork"
	finally:
		frappe_warm._mode.clear()
	assert frappe_warm.worker_mode() == frappe_warm.FORK
