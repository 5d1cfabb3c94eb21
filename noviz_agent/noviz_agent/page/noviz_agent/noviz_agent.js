// /app/noviz-agent: the chat on a full page, with the person's conversations beside it.
frappe.pages["noviz-agent"].on_page_load = function (wrapper) {
	const page = frappe.ui.make_app_page({ parent: wrapper, title: __("Noviz Agent"), single_column: true });
	const container = document.createElement("div");
	page.main[0].appendChild(container);
	frappe.require("noviz_chat.bundle.js", () => {
		wrapper.noviz_chat = window.noviz_chat.desk.mount_page(container);
		wrapper.noviz_chat.focus();
	});
};

frappe.pages["noviz-agent"].on_page_show = function (wrapper) {
	if (wrapper.noviz_chat) wrapper.noviz_chat.focus();
};
