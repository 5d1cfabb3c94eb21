// A quick way to try the settings from the form: opens the chat with a test question.
frappe.ui.form.on("Agent Settings", {
	refresh(frm) {
		frm.add_custom_button(__("Open the agent"), () => {
			if (window.noviz_agent && window.noviz_agent.open) window.noviz_agent.open();
		});
	},
});
