frappe.query_reports["Agent Turns Needing Attention"] = {
	filters: [
		{ fieldname: "from_date", label: __("From"), fieldtype: "Date", default: frappe.datetime.add_days(frappe.datetime.get_today(), -30) },
		{ fieldname: "to_date", label: __("To"), fieldtype: "Date", default: frappe.datetime.get_today() },
		{ fieldname: "reason", label: __("Why"), fieldtype: "Select", options: ["", "Not helpful", "Failed", "Slow"] },
		{ fieldname: "person", label: __("Person"), fieldtype: "Link", options: "User" },
		{ fieldname: "slow_ms", label: __("Slow above (ms)"), fieldtype: "Int" },
	],
};
