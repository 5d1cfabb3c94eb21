// Failed turns in red, thumbs-down in orange: the rows an administrator should read first.
frappe.listview_settings["Agent Interaction Log"] = {
	add_fields: ["failed", "rating", "response_type"],
	get_indicator(doc) {
		if (doc.failed) return [__("Failed"), "red", "failed,=,1"];
		if (doc.rating === "Down") return [__("Not helpful"), "orange", "rating,=,Down"];
		if (doc.rating === "Up") return [__("Helpful"), "green", "rating,=,Up"];
		return [__(doc.response_type || "text"), "blue", `response_type,=,${doc.response_type}`];
	},
};
