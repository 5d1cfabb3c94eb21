// Noviz agent launcher, on every desk page (app_include_js). Small on purpose: the chat
// itself is loaded with frappe.require the first time someone opens it.
(function () {
	"use strict";

	// frappe.ui.keys names keys shift before ctrl (see get_key): Ctrl+Shift+K is "shift+ctrl+k".
	const SHORTCUT = "shift+ctrl+k";

	function with_chat(callback) {
		if (window.noviz_chat && window.noviz_chat.desk) return callback(window.noviz_chat.desk);
		frappe.require("noviz_chat.bundle.js", () => callback(window.noviz_chat.desk));
	}

	const launcher = {
		open: () => with_chat((desk) => desk.open_drawer()),
		toggle: () => with_chat((desk) => desk.toggle_drawer()),
		close: () => window.noviz_chat && window.noviz_chat.desk && window.noviz_chat.desk.close_drawer(),
	};
	// Interaction logs and procedure runs keep their content at a permission level no role holds:
	// their person, or an Agent Auditor (whose read is recorded), reads it through the audited call.
	launcher.audit_button = (frm) => {
		const own = frm.doc.person === frappe.session.user;
		if (frm.is_new() || (!own && !frappe.user.has_role("Agent Auditor"))) return;
		frm.add_custom_button(own ? __("Show content") : __("Read content (recorded)"), () =>
			frappe
				.call({ method: "noviz_agent.api.audit_record", type: "GET", args: { doctype: frm.doctype, name: frm.doc.name } })
				.then((r) => {
					const text = frappe.utils.escape_html(JSON.stringify(r.message, null, 2));
					frappe.msgprint({ title: __("Content of {0}", [frm.doc.name]), message: `<pre>${text}</pre>`, wide: true });
				})
		);
	};
	window.noviz_agent = launcher;

	function button() {
		const node = document.createElement("button");
		node.type = "button";
		node.className = "btn-reset nav-link text-muted noviz-agent-launcher";
		node.title = __("Ask the agent ({0})", ["Ctrl+Shift+K"]);
		node.setAttribute("aria-label", node.title);
		node.textContent = __("Ask AI");
		node.addEventListener("click", launcher.toggle);
		return node;
	}

	// v15 has a navbar list to join; where a desk has none (v16 moved it), a floating button
	// keeps the chat reachable without depending on that markup.
	function add_launcher() {
		if (document.querySelector(".noviz-agent-launcher")) return;
		// The right-hand list (notifications, help, user), not the breadcrumbs list the router redraws.
		const nav = document.querySelector("header.navbar .navbar-collapse > .navbar-nav");
		if (nav) {
			const item = document.createElement("li");
			item.className = "nav-item noviz-agent-nav-item";
			item.appendChild(button());
			nav.insertBefore(item, nav.firstChild);
		} else {
			const floating = button();
			floating.classList.add("noviz-agent-floating");
			document.body.appendChild(floating);
		}
	}

	let started = false;
	function start() {
		if (started || !frappe.session || frappe.session.user === "Guest") return;
		started = true;
		add_launcher();
		// If a desk redraw drops the button, put it back on the next route change.
		if (frappe.router && frappe.router.on) frappe.router.on("change", add_launcher);
		frappe.ui.keys.add_shortcut({
			shortcut: SHORTCUT,
			action: () => launcher.toggle(),
			description: __("Open or close the Noviz agent"),
			ignore_inputs: true,
		});
	}

	// Bundles in app_include_js may run after the desk has started (app_ready already fired):
	// then start now, otherwise on app_ready.
	if (window.frappe && frappe.Application && frappe.app instanceof frappe.Application) start();
	else $(document).on("app_ready", start);
})();
