// /app/noviz-goals: the person's standing goals, what each last found, and the proposals waiting for them.
// Drawn with the chat's own components (render.js); confirm and cancel go through the chat's api.confirm/cancel.
frappe.pages["noviz-goals"].on_page_load = function (wrapper) {
	const page = frappe.ui.make_app_page({ parent: wrapper, title: __("Standing goals"), single_column: true });
	const root = document.createElement("div");
	root.className = "nz-goals";
	page.main[0].appendChild(root);
	page.set_primary_action(__("New goal"), () => frappe.new_doc("Agent Goal"));
	page.set_secondary_action(__("Refresh"), () => load());

	const call = (method, args, type) =>
		new Promise((resolve, reject) =>
			frappe.call({ method: "noviz_agent.api." + method, args, type: type || "POST", callback: (r) => resolve(r.message), error: reject })
		);
	// A refused confirm (expired, changed, no longer permitted) comes back as a response, not an error.
	const settle = (method, item) => (token) =>
		call(method, { token, conversation: item.conversation || null }).then((reply) => {
			const resp = (reply && reply.response) || {};
			if (resp.type === "refusal" || resp.type === "error") throw new Error((resp.refusal || resp.error || {}).message || __("That did not work."));
			if (resp.type === "proposal") throw new Error(resp.text || __("The document changed since; ask the goal again."));
			return resp;
		});

	function inbox(render, proposals) {
		const { el } = render;
		const box = el("div", { class: "nz-goals-inbox" }, [el("h4", { text: __("Waiting for you") })]);
		if (!proposals.length) box.appendChild(el("p", { class: "nz-muted", text: __("Nothing is waiting for you.") }));
		for (const item of proposals) {
			box.appendChild(el("div", { class: "nz-muted", text: __("Prepared by {0}", [item.goal_title || item.goal]) }));
			box.appendChild(render.proposal_block(item.proposal, { on_confirm: settle("confirm", item), on_cancel: settle("cancel", item) }));
		}
		return box;
	}

	// A stored datetime as the person's desk shows dates and times (their format, no microseconds).
	const when = (value) => (value ? frappe.datetime.str_to_user(String(value).split(".")[0]) : "");

	function goal_card(render, goal) {
		const { el } = render;
		const toggle = el("button", { class: "btn btn-xs btn-default", text: goal.active ? __("Pause") : __("Switch on") });
		toggle.addEventListener("click", () => call("goal_active", { name: goal.name, active: goal.active ? 0 : 1 }).then(load));
		const head = el("div", { class: "nz-goal-head" }, [
			el("a", { href: render.record_path("Agent Goal", goal.name), class: "nz-link nz-block-title", text: goal.title }),
			" ",
			el("span", { class: "nz-badge", text: __(goal.status) }),
			" ",
			toggle,
		]);
		const facts = [goal.schedule, goal.company, goal.next_run ? __("next run {0}", [when(goal.next_run)]) : null, __("{0} tokens this month", [goal.spent.tokens])];
		const card = el("div", { class: "nz-goal frappe-card", style: "padding: var(--padding-md); margin-bottom: var(--margin-md)" }, [
			head,
			el("div", { class: "nz-muted", text: facts.filter(Boolean).join(" · ") }),
		]);
		if (goal.stop_reason) card.appendChild(render.refusal_block({ message: goal.stop_reason }));
		const last = goal.last;
		if (!last) card.appendChild(el("p", { class: "nz-muted", text: __("It has not run yet.") }));
		else {
			card.appendChild(el("div", { class: "nz-muted", text: __("Last run {0}: {1}", [when(last.started), __(last.status)]) }));
			// The digest as the chat shows it; its proposals are confirmed in the inbox above, not here.
			card.appendChild(render.response(Object.assign({}, last.response, { proposal: null })));
		}
		return card;
	}

	function load() {
		return call("goals", {}, "GET").then((data) => {
			const render = window.noviz_chat.render;
			const titles = Object.fromEntries(data.goals.map((g) => [g.name, g.title]));
			data.proposals.forEach((p) => (p.goal_title = titles[p.goal]));
			root.textContent = "";
			root.appendChild(inbox(render, data.proposals));
			root.appendChild(render.el("h4", { text: __("Your goals") }));
			if (!data.goals.length) {
				root.appendChild(
					render.el("p", {
						class: "nz-muted",
						text: __("You have no standing goals yet. Ask the agent, e.g. “Remind me every Monday which items will run out within two weeks”, or make one with New goal."),
					})
				);
			}
			data.goals.forEach((goal) => root.appendChild(goal_card(render, goal)));
		});
	}

	frappe.require("noviz_chat.bundle.js", () => {
		wrapper.noviz_goals = { load };
		load();
	});
};

frappe.pages["noviz-goals"].on_page_show = function (wrapper) {
	if (wrapper.noviz_goals) wrapper.noviz_goals.load();
};
