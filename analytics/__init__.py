"""Frappe-free analytics: the data contract, the catalogue of analyses, forecasts and charts."""
