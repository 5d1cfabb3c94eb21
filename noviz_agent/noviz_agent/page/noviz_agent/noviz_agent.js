// /app/noviz-agent: the chat on a full page, with the person's conversations beside it.
// ?conversation=<name> opens one of the person's conversations (the link an assistant's proposal gives).
function noviz_open_linked(wrapper) {
	const name = new URLSearchParams(window.location.search).get("conversation");
	if (name && wrapper.noviz_chat && wrapper.noviz_chat.conversation !== name) wrapper.noviz_chat.open_conversation(name).catch((e) => frappe.msgprint(e.message));
}

frappe.pages["noviz-agent"].on_page_load = function (wrapper) {
	const page = frappe.ui.make_app_page({ parent: wrapper, title: __("Noviz Agent"), single_column: true });
	const container = document.createElement("div");
	page.main[0].appendChild(container);
	frappe.require("noviz_chat.bundle.js", () => {
		wrapper.noviz_chat = window.noviz_chat.desk.mount_page(container);
		noviz_open_linked(wrapper);
		wrapper.noviz_chat.focus();
	});
};

frappe.pages["noviz-agent"].on_page_show = function (wrapper) {
	if (!wrapper.noviz_chat) return;
	noviz_open_linked(wrapper);
	wrapper.noviz_chat.focus();
};
