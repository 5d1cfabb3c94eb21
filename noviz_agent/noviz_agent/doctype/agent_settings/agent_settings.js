// A quick way to try the settings from the form: opens the chat with a test question.
frappe.ui.form.on("Agent Settings", {
	refresh(frm) {
		frm.add_custom_button(__("Open the agent"), () => {
			if (window.noviz_agent && window.noviz_agent.open) window.noviz_agent.open();
		});
		if (frm.doc.enable_mcp) show_mcp_clients(frm);
	},
	enable_mcp(frm) {
		if (frm.doc.enable_mcp) show_mcp_clients(frm);
	},
});

// Who has connected an assistant over MCP, from the interaction log, with their OAuth client.
function show_mcp_clients(frm) {
	const field = frm.get_field("mcp_clients");
	if (!field) return;
	const url = frappe.urllib.get_base_url() + "/api/method/noviz_agent.api.mcp";
	frappe.call({ method: "noviz_agent.api.mcp_clients", type: "GET" }).then((r) => {
		const rows = r.message || [];
		const esc = frappe.utils.escape_html;
		const head = `<p class="text-muted">${esc(__("The endpoint for assistants:"))} <code>${esc(url)}</code></p>`;
		if (!rows.length) {
			field.$wrapper.html(head + `<p class="text-muted">${esc(__("No assistant has connected yet."))}</p>`);
			return;
		}
		const cells = rows
			.map(
				(row) => `<tr>
					<td>${esc(row.person)}</td>
					<td>${esc(row.client || "")}</td>
					<td>${esc(row.app_name || row.signed_in_with)}</td>
					<td>${esc(row.active_token === null ? "" : row.active_token ? __("Yes") : __("No"))}</td>
					<td>${esc(String(row.calls))}</td>
					<td>${esc(frappe.datetime.prettyDate(row.last_call))}</td>
				</tr>`
			)
			.join("");
		field.$wrapper.html(
			head +
				`<table class="table table-bordered table-sm"><thead><tr>
					<th>${esc(__("Person"))}</th><th>${esc(__("Client"))}</th><th>${esc(__("Signed in with"))}</th>
					<th>${esc(__("Token active"))}</th><th>${esc(__("Calls"))}</th><th>${esc(__("Last call"))}</th>
				</tr></thead><tbody>${cells}</tbody></table>
				<p class="text-muted">${esc(
					__("A person revokes an assistant's OAuth access on their Third Party Apps page (/third_party_apps); API keys are revoked by generating new ones on the User.")
				)}</p>`
		);
	});
}
