"""The chat's document upload in a real browser: file picker, size check, drag and drop, the proposal."""

from __future__ import annotations

import base64

MAKE_CHAT = """
(max) => {
	const box = document.createElement("div");
	document.body.appendChild(box);
	window.uploads = [];
	const api = Object.assign({}, window.chat.api, {
		upload: async (file, conversation) => {
			window.uploads.push([file.name, file.size, conversation]);
			return { conversation: "CONV-1", response: window.canned.proposal };
		},
	});
	window.upload_chat = new noviz_chat.Chat(box, { api, max_chars: 200, max_upload_bytes: max });
	return true;
}
"""
PDF = base64.b64decode(b"JVBERi0xLjQKJSVFT0YK")


def chat_with_upload(page, max_bytes=1000):
	page.add_script_tag(url="/noviz_agent/public/js/noviz_chat/upload.js")
	page.wait_for_function("window.noviz_chat.upload !== undefined")
	page.evaluate(MAKE_CHAT, max_bytes)
	return page.query_selector_all(".nz-chat")[-1]


def test_picked_file_is_uploaded_and_its_proposal_shown(page):
	box = chat_with_upload(page)
	picker = box.query_selector("input[type=file]:not([capture])")
	assert "application/pdf" in picker.get_attribute("accept")
	picker.set_input_files(files=[{"name": "invoice.pdf", "mimeType": "application/pdf", "buffer": PDF}])
	page.wait_for_function("window.upload_chat.messages.querySelector('.nz-proposal') !== null")
	assert page.evaluate("window.uploads") == [["invoice.pdf", len(PDF), None]]
	assert "invoice.pdf" in box.query_selector(".nz-user").inner_text()
	assert page.evaluate("window.upload_chat.conversation") == "CONV-1"
	assert page.errors == []


def test_camera_input_asks_phones_for_the_camera(page):
	box = chat_with_upload(page)
	camera = box.query_selector("input[capture]")
	assert (camera.get_attribute("accept"), camera.get_attribute("capture")) == ("image/*", "environment")


def test_file_over_the_size_limit_is_refused_without_uploading(page):
	box = chat_with_upload(page, max_bytes=4)
	box.query_selector("input[type=file]:not([capture])").set_input_files(
		files=[{"name": "big.pdf", "mimeType": "application/pdf", "buffer": PDF}]
	)
	page.wait_for_function("window.upload_chat.messages.querySelector('.nz-agent') !== null")
	assert "the limit is" in box.query_selector(".nz-agent").inner_text()
	assert page.evaluate("window.uploads") == []


def test_dropped_file_is_uploaded(page):
	chat_with_upload(page)
	page.evaluate(
		"""() => {
		const data = new DataTransfer();
		data.items.add(new File([new Uint8Array([37, 80, 68, 70])], "dropped.pdf", { type: "application/pdf" }));
		const zone = window.upload_chat.container;
		zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: data, bubbles: true, cancelable: true }));
		zone.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
	}"""
	)
	page.wait_for_function("window.uploads.length === 1")
	assert page.evaluate("window.uploads[0][0]") == "dropped.pdf"
