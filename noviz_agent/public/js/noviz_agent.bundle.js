// Noviz agent launcher, on every desk page (app_include_js). Small on purpose: the chat
// itself is loaded with frappe.require the first time someone opens it.
(function () {
	"use strict";

	const SHORTCUT = "ctrl+shift+k";

	function with_chat(callback) {
		if (window.noviz_chat && window.noviz_chat.desk) return callback(window.noviz_chat.desk);
		frappe.require("noviz_chat.bundle.js", () => callback(window.noviz_chat.desk));
	}

	const launcher = {
		open: () => with_chat((desk) => desk.open_drawer()),
		toggle: () => with_chat((desk) => desk.toggle_drawer()),
		close: () => window.noviz_chat && window.noviz_chat.desk && window.noviz_chat.desk.close_drawer(),
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
		const nav = document.querySelector("header.navbar .navbar-nav");
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

	$(document).on("app_ready", () => {
		if (!frappe.session || frappe.session.user === "Guest") return;
		if (frappe.boot.noviz_agent && frappe.boot.noviz_agent.enabled === false) return;
		add_launcher();
		frappe.ui.keys.add_shortcut({
			shortcut: SHORTCUT,
			action: () => launcher.toggle(),
			description: __("Open or close the Noviz agent"),
			ignore_inputs: true,
		});
	});
})();
