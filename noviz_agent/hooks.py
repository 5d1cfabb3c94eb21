app_name = "noviz_agent"
app_title = "Noviz Agent"
app_publisher = "Noviz"
app_description = "An AI agent inside ERPNext that works as the signed-in person"
app_email = "dev@noviz.invalid"
app_license = "mit"
required_apps = ["erpnext"]
