"""The usage review counts modules, tools offered but never used, refusals, failures and guards."""

from noviz_agent.governance.review import usage


def test_usage_counts_what_the_log_says():
	logs = [
		{"modules": "selling, accounting", "tools_offered": "sales_order.list, customer.get", "guards": ""},
		{
			"modules": "selling",
			"tools_offered": "sales_order.list\ncustomer.get",
			"guards": "repeated_identical_call",
		},
	]
	calls = [
		{"tool": "sales_order.list", "status": "ok"},
		{"tool": "sales_order.list", "status": "refused"},
		{"tool": "tools.search", "status": "error"},
	]
	rows = usage(logs, calls)
	modules = {r["name"]: r for r in rows if r["kind"] == "module"}
	tools = {r["name"]: r for r in rows if r["kind"] == "tool"}
	guards = {r["name"]: r["fired"] for r in rows if r["kind"] == "guard"}
	assert modules["selling"]["turns"] == 2 and modules["selling"]["share"] == 100.0
	assert modules["accounting"]["share"] == 50.0
	assert tools["customer.get"] == {
		"kind": "tool",
		"name": "customer.get",
		"offered": 2,
		"used": 0,
		"refused": 0,
		"failed": 0,
		"never_used": 1,
	}
	assert tools["sales_order.list"]["used"] == 2 and tools["sales_order.list"]["refused"] == 1
	assert tools["tools.search"]["offered"] == 0 and tools["tools.search"]["failed"] == 1
	assert guards == {"repeated_identical_call": 1}
