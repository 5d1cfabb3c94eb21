frappe.query_reports["Agent Usage Review"] = {
	filters: [
		{ fieldname: "from_date", label: __("From"), fieldtype: "Date", default: frappe.datetime.add_days(frappe.datetime.get_today(), -30) },
		{ fieldname: "to_date", label: __("To"), fieldtype: "Date", default: frappe.datetime.get_today() },
		{ fieldname: "kind", label: __("Kind"), fieldtype: "Select", options: ["", "module", "tool", "guard"] },
	],
};
