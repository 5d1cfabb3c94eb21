// The content is read through the audited call (noviz_agent.bundle.js: audit_button).
frappe.ui.form.on("Agent Interaction Log", { refresh: (frm) => noviz_agent.audit_button(frm) });
