"""Document intake: from a supplier invoice, customer order or receipt to a draft the person confirms.

Plain Python (no frappe); the frappe edge is `edge/frappe_files.py`.

files      what a file is (PDF or image, by its bytes), size and type limits, page images
textlayer  PDFs with a text layer: words and tables read with pdfplumber, fields found by label
vision     scans, photos and image-only PDFs: the vision model answers in a JSON schema
document   the extracted document (one schema for both paths), page merge, number and date parsing
checks     arithmetic, dates and currency checked in code; failures are shown, never fixed
matching   party by tax id, exact then fuzzy name; items by supplier part number, code, description
proposal   the pipeline and the draft (doctype, values, matches, new records, duplicates)
"""
