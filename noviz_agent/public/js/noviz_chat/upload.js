// Noviz agent: documents into the chat — file picker, camera on phones, drag and drop.
// The file goes to noviz_agent.api.upload_document; the reply is a proposal the person confirms.
(function (root) {
	"use strict";

	const ns = (root.noviz_chat = root.noviz_chat || {});
	const ENDPOINT = "/api/method/noviz_agent.api.upload_document";
	const ACCEPT = "application/pdf,image/png,image/jpeg,image/webp,application/xml,text/xml,.xml";
	// The server checks again (type by content, Agent Settings' limit); this only saves a wasted upload.
	const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
	const t = (text, args) => (root.__ ? root.__(text, args) : text.replace(/\{(\d+)\}/g, (_, i) => (args || [])[i]));

	function server_message(body) {
		try {
			const messages = JSON.parse((body && body._server_messages) || "[]");
			if (messages.length) {
				let first = messages[0];
				try {
					first = JSON.parse(first);
				} catch (e) {
					/* a plain string */
				}
				const doc = new DOMParser().parseFromString(String(first.message || first), "text/html");
				return doc.body.textContent;
			}
		} catch (e) {
			/* fall through */
		}
		return t("The file could not be uploaded.");
	}

	async function post(file, conversation) {
		const form = new FormData();
		form.append("file", file, file.name);
		if (conversation) form.append("conversation", conversation);
		const headers = { Accept: "application/json" };
		if (root.frappe && root.frappe.csrf_token) headers["X-Frappe-CSRF-Token"] = root.frappe.csrf_token;
		const response = await fetch(ENDPOINT, { method: "POST", body: form, headers, credentials: "same-origin" });
		const body = await response.json().catch(() => ({}));
		if (!response.ok) throw new Error(server_message(body));
		return body.message;
	}

	async function send_file(chat, file) {
		if (!file || chat.busy) return;
		const limit = chat.options.max_upload_bytes || DEFAULT_MAX_BYTES;
		chat.add_question(t("Document: {0}", [file.name]));
		if (file.size > limit) {
			chat.add_response({
				type: "error",
				error: {
					message: t("{0} is {1} MB; the limit is {2} MB.", [file.name, (file.size / 1048576).toFixed(1), Math.round(limit / 1048576)]),
					hint: t("Upload a smaller scan, or only this document's pages."),
				},
			});
			return;
		}
		chat.set_busy(true);
		chat.status.textContent = t("Reading {0}…", [file.name]);
		try {
			const upload = chat.api.upload || post;
			const reply = await upload(file, chat.conversation);
			if (reply.conversation) chat.conversation = reply.conversation;
			chat.add_response(reply.response);
			// A large file is read in the background; its draft arrives over realtime.
			if (reply.queued && reply.turn) waiting.set(reply.turn, chat);
		} catch (error) {
			chat.add_response({ type: "error", error: { message: error.message, hint: t("Check the file and try again.") } });
		} finally {
			chat.set_busy(false);
		}
	}

	const waiting = new Map();
	if (root.frappe && root.frappe.realtime) {
		root.frappe.realtime.on("noviz_agent_intake", (data) => {
			const chat = data && waiting.get(data.turn);
			if (!chat) return;
			waiting.delete(data.turn);
			if (data.conversation) chat.conversation = chat.conversation || data.conversation;
			chat.add_response(data.response);
		});
	}

	function picker(chat, attrs) {
		const input = chat.el("input", Object.assign({ type: "file", hidden: true }, attrs));
		input.addEventListener("change", () => {
			const file = input.files && input.files[0];
			input.value = "";
			send_file(chat, file);
		});
		return input;
	}

	// Adds the buttons to the composer bar and makes the whole chat a drop target.
	function attach(chat, composer) {
		const files = picker(chat, { accept: ACCEPT, "aria-label": t("Choose a document") });
		const camera = picker(chat, { accept: "image/*", capture: "environment", "aria-label": t("Take a photo") });
		const bar = composer.querySelector(".nz-composer-bar") || composer;
		const button = (text, title, input) =>
			chat.el("button", { class: "btn btn-xs btn-default nz-upload", type: "button", text, title, "aria-label": title, onclick: () => input.click() });
		bar.insertBefore(button("📎", t("Attach an invoice, order or receipt (PDF or photo)"), files), bar.firstChild);
		// Phones open the camera; desktops without one just show the file dialog.
		if (root.matchMedia && root.matchMedia("(pointer: coarse)").matches) {
			bar.insertBefore(button("📷", t("Photograph a document"), camera), bar.firstChild.nextSibling);
		}
		composer.appendChild(files);
		composer.appendChild(camera);
		const zone = chat.container;
		zone.addEventListener("dragover", (event) => {
			if (!event.dataTransfer || !Array.from(event.dataTransfer.types || []).includes("Files")) return;
			event.preventDefault();
			zone.classList.add("nz-dropping");
		});
		zone.addEventListener("dragleave", () => zone.classList.remove("nz-dropping"));
		zone.addEventListener("drop", (event) => {
			if (!event.dataTransfer || !event.dataTransfer.files.length) return;
			event.preventDefault();
			zone.classList.remove("nz-dropping");
			send_file(chat, event.dataTransfer.files[0]);
		});
	}

	ns.upload = { attach, send_file, ACCEPT };
})(typeof window !== "undefined" ? window : globalThis);
