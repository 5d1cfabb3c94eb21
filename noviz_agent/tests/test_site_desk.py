"""Site test: installing the app leaves the desk where frappe puts people, on 15 and on 16.

Frappe sends a person to the desk after login only while every app on the apps screen routes inside
it (`frappe.apps.is_desk_apps`: `/app/...` on 15, `/desk/...` on 16); otherwise to the apps screen.
"""

from __future__ import annotations

import frappe
from frappe.apps import get_apps, get_default_path, is_desk_apps

from noviz_agent.edge.frappe_versions import DESK_PREFIX, form_path
from noviz_agent.tests.utils import SiteTestCase


class TestDeskPlace(SiteTestCase):
	def test_the_chat_on_the_apps_screen_routes_inside_the_desk(self):
		frappe.set_user("Administrator")
		apps = get_apps()
		ours = [a for a in apps if a.get("name") == "noviz_agent"]
		self.assertEqual(len(ours), 1, f"precondition: the app is on the apps screen: {apps}")
		[hook] = frappe.get_hooks("add_to_apps_screen", app_name="noviz_agent")
		self.assertEqual(hook["route"], f"{DESK_PREFIX}/noviz-agent")
		# Frappe 16 opens the route as given; 15 opens `/app/<x>` only where x is a workspace the
		# person may see, else their first workspace, so the tile stays inside the desk either way.
		self.assertTrue(ours[0]["route"].startswith(DESK_PREFIX + "/"), ours[0])
		others = [a for a in apps if a.get("name") not in ("frappe", "noviz_agent")]
		self.assertTrue(others, "precondition: another app (ERPNext) is on the apps screen")
		if is_desk_apps(others):
			# With ERPNext alone people land in the desk; the agent must not change that.
			self.assertTrue(is_desk_apps(apps), f"routes outside the desk: {apps}")
			if not frappe.db.get_single_value("System Settings", "default_app"):
				self.assertIn(get_default_path(), ("/app", "/desk", ours[0]["route"], others[0]["route"]))

	def test_the_desk_prefix_is_the_one_frappe_builds_links_with(self):
		self.assertTrue(form_path("Customer", "X").startswith(f"{DESK_PREFIX}/customer/"))
