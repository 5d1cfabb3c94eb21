// The chat, loaded on first use. render.js and chat.js are plain scripts, shared with the
// static page of the browser test; desk.js connects them to frappe.
import "./noviz_chat/render.js";
import "./noviz_chat/upload.js";
import "./noviz_chat/chat.js";
import "./noviz_chat/desk.js";
