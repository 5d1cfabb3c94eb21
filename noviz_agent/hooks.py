from noviz_agent.edge.frappe_versions import DESK_PREFIX

app_name = "noviz_agent"
app_title = "Noviz Agent"
app_publisher = "Noviz"
app_description = "An AI agent inside ERPNext that works as the signed-in person"
app_email = "dev@noviz.invalid"
app_license = "mit"
required_apps = ["erpnext"]

# The full-page chat on the apps screen (Frappe 15 and 16), under the desk's own prefix: frappe sends
# people to the desk after login only while every app's route is inside it (`frappe.apps.is_desk_apps`);
# an `/app/...` route on 16 would send everyone to the apps screen instead.
add_to_apps_screen = [
	{
		"name": app_name,
		"logo": "/assets/noviz_agent/images/noviz-agent-logo.svg",
		"title": app_title,
		"route": f"{DESK_PREFIX}/noviz-agent",
		"has_permission": "noviz_agent.api.can_use_agent",
	}
]

# The chat drawer on every desk page; the bundle is tiny and lazy-loads the chat itself.
app_include_js = "noviz_agent.bundle.js"
app_include_css = "noviz_agent.bundle.css"

after_install = "noviz_agent.install.after_install"
# A migrate may add DocTypes and change permissions: the cached DocType list and allowances go.
after_migrate = ["noviz_agent.edge.frappe_allowance.after_migrate"]

# A change to roles, permissions or the agent's configuration (role policy, budgets, procedures,
# other systems, companies) drops every cached allowance and the configuration each turn reads
# (see edge/frappe_allowance.py).
_invalidate = {
	"after_insert": "noviz_agent.edge.frappe_allowance.invalidate",
	"on_update": "noviz_agent.edge.frappe_allowance.invalidate",
	"on_trash": "noviz_agent.edge.frappe_allowance.invalidate",
	"after_rename": "noviz_agent.edge.frappe_allowance.invalidate",
}
# The generation outlives `frappe.clear_cache()` (which drops the cached values themselves), so a
# value stored late under an old generation number is never read again. Changes made in Role
# Permission Manager fire no document event: frappe's metadata version, which they renew, is part
# of every key as well (edge/frappe_allowance.cache_token).
persistent_cache_keys = ["noviz_agent:permission_generation"]

doc_events = {
	"User": _invalidate,
	"Has Role": _invalidate,
	"DocPerm": _invalidate,
	"Custom DocPerm": _invalidate,
	"User Permission": _invalidate,
	"Agent Role Policy": _invalidate,
	"Agent Budget": _invalidate,
	"Agent SOP": _invalidate,
	"Agent System": _invalidate,
	"Agent System Connection": _invalidate,
	"Company": _invalidate,
}

# Assistants over MCP find where to sign in (OAuth metadata) where frappe does not publish it itself.
page_renderer = ["noviz_agent.edge.frappe_mcp.OAuthMetadata"]

# What the chat needs before its first call (no secrets): the message length limit.
boot_session = "noviz_agent.api.boot_session"

# Retention: old conversations and interaction log rows go every night (Agent Settings says when).
# Standing goals: every five minutes the goals that are due are queued, each run as its person.
scheduler_events = {
	"daily": ["noviz_agent.tasks.apply_retention"],
	"cron": {"*/5 * * * *": ["noviz_agent.edge.frappe_goals.enqueue_due"]},
}
# A goal's runs stay (with their cost) when its person deletes the goal.
ignore_links_on_delete = ["Agent Goal Run"]

# The example procedures (Agent SOP records) ship as fixtures.
fixtures = ["Agent SOP"]
