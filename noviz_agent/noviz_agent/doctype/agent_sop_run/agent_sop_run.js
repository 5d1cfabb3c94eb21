// What no desk view shows of this record (its content is at a permission level no role holds) is
// read through the audited endpoint: by its person, or by an Agent Auditor, whose read is recorded.
frappe.ui.form.on("Agent SOP Run", {
	refresh(frm) {
		const own = frm.doc.person === frappe.session.user;
		if (frm.is_new() || (!own && !frappe.user.has_role("Agent Auditor"))) return;
		frm.add_custom_button(own ? __("Show content") : __("Read content (recorded)"), () => {
			frappe
				.call({ method: "noviz_agent.api.audit_record", type: "GET", args: { doctype: frm.doctype, name: frm.doc.name } })
				.then((r) => {
					const text = JSON.stringify(r.message, null, 2);
					frappe.msgprint({ title: __("Content of {0}", [frm.doc.name]), message: "<pre>" + frappe.utils.escape_html(text) + "</pre>", wide: true });
				});
		});
	},
});
