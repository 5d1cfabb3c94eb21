// The content is read through the audited call (noviz_agent.bundle.js: audit_button).
frappe.ui.form.on("Agent SOP Run", { refresh: (frm) => noviz_agent.audit_button(frm) });
