"""Printed values read as a person reads them: dates in many forms and languages, amounts, currencies.

Dates. Month names come from Babel's locale data (every language in LANGUAGES, full and short,
with and without accents) and the date is built by python-dateutil. A numeric date is read when
its form says which part is the day: a year first, a day above 12, or dots (day.month.year is the
only dotted form in use). Otherwise it is truly ambiguous (03/04/2026) and takes the `order` the
caller knows (the document's own other dates, its language, the site's date format); with no
order it stays unread rather than guessed.

Amounts. price-parser reads the number whichever decimal mark and grouping the document uses; the
sign (a leading or trailing minus, parentheses) and what may surround a number are checked here,
so a reference like "INV-1234" or a percentage is never an amount. Currency signs map to ISO codes
by CURRENCY_SIGNS; a bare "$" is read as USD.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
import unicodedata

LANGUAGES = ("en", "de", "fr", "nl", "es", "it", "pt")
# The order of day and month in a numeric date, by the language of the document ("en" differs
# between countries, so it says nothing).
LANGUAGE_ORDER = {"de": "DMY", "fr": "DMY", "nl": "DMY", "es": "DMY", "it": "DMY", "pt": "DMY"}
CURRENCY_SIGNS = {
	"$": "USD",
	"US$": "USD",
	"USD": "USD",
	"€": "EUR",
	"EUR": "EUR",
	"EURO": "EUR",
	"£": "GBP",
	"GBP": "GBP",
	"¥": "JPY",
	"₹": "INR",
	"RS": "INR",
	"RS.": "INR",
	"INR": "INR",
	"CHF": "CHF",
	"FR.": "CHF",
	"A$": "AUD",
	"AU$": "AUD",
	"C$": "CAD",
	"CA$": "CAD",
	"HK$": "HKD",
	"S$": "SGD",
	"KR": None,  # Danish, Norwegian and Swedish crowns print the same sign
	"ZŁ": "PLN",
	"KČ": "CZK",
	"R$": "BRL",
}


def _plain(text: str) -> str:
	"""Lower case without accents or dots: "Févr." and "fevr" are the same word."""
	return _unaccented(text).replace(".", "").strip()


def _unaccented(text: str) -> str:
	"""The text in lower case without accents, character for character (positions are kept)."""
	return "".join(unicodedata.normalize("NFKD", c)[0].lower() if c.strip() else c for c in text)


@functools.cache
def iso_currencies() -> frozenset[str]:
	from babel.numbers import list_currencies

	return frozenset(list_currencies())


@functools.cache
def month_names() -> dict[str, int]:
	"""Every month name and abbreviation of LANGUAGES (Babel's data), plain, to its number."""
	from babel.dates import get_month_names

	names: dict[str, int] = {}
	clashes: set[str] = set()
	for language in LANGUAGES:
		for width in ("wide", "abbreviated"):
			for context in ("format", "stand-alone"):
				for number, name in get_month_names(width, context, locale=language).items():
					key = _plain(name)
					if names.get(key, number) != number:
						clashes.add(key)
					names[key] = number
	for key in ("sept",):  # a common short form Babel's locales do not list
		names.setdefault(key, 9)
	for key in clashes:
		names.pop(key, None)
	return names


@functools.cache
def _month_pattern() -> str:
	words = sorted(month_names(), key=len, reverse=True)
	# Accents are matched loosely: the page may print "Août" or "Aout", "März" or "Marz".
	return "|".join(re.escape(w) for w in words)


@functools.cache
def _patterns() -> list[tuple[str, re.Pattern]]:
	month = rf"(?P<month>{_month_pattern()})\.?"
	day = r"(?P<day>\d{1,2})(?:st|nd|rd|th|er|e|º|°)?\.?"
	year = r"(?P<year>\d{4})"
	return [
		("iso", re.compile(r"(?<!\d)(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?!\d)")),
		("ymd", re.compile(r"(?<!\d)(?P<year>\d{4})[/.](?P<month>\d{1,2})[/.](?P<day>\d{1,2})(?!\d)")),
		("dotted", re.compile(r"(?<![\d.])(?P<a>\d{1,2})\.(?P<b>\d{1,2})\.(?P<year>\d{4}|\d{2})(?![\d.])")),
		(
			"numeric",
			re.compile(
				r"(?<![\d/-])(?P<a>\d{1,2})(?P<sep>[/-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})(?![\d/-])"
			),
		),
		(
			"day_month",
			re.compile(rf"(?<![\w]){day}[\s-]*(?:de\s+)?{month}[\s,-]*(?:de\s+)?{year}(?!\d)", re.I),
		),
		("month_day", re.compile(rf"(?<![\w]){month}\s*{day}\s*,?\s*{year}(?!\d)", re.I)),
	]


def _build(year: int, month: int, day: int) -> dt.date | None:
	from dateutil import parser

	try:
		return parser.parse(f"{year:04d}-{month:02d}-{day:02d}", yearfirst=True).date()
	except (ValueError, OverflowError):
		return None


def _year(text: str) -> int:
	value = int(text)
	return value + 2000 if value < 100 else value  # invoices with two-digit years are of this century


def numeric_order(a: int, b: int) -> str | None:
	"""What a day/month pair itself says about its order: DMY, MDY, or None when both could be."""
	if a > 12 >= b:
		return "DMY"
	if b > 12 >= a:
		return "MDY"
	if a == b:
		return "DMY"  # the same either way
	return None


def _from_match(kind: str, m: re.Match, order: str | None) -> dt.date | None:
	parts = m.groupdict()
	if kind in ("iso", "ymd"):
		return _build(int(parts["year"]), int(parts["month"]), int(parts["day"]))
	if kind in ("day_month", "month_day"):
		number = month_names().get(_plain(parts["month"]))
		return _build(int(parts["year"]), number, int(parts["day"])) if number else None
	a, b = int(parts["a"]), int(parts["b"])
	said = "DMY" if kind == "dotted" else numeric_order(a, b)
	chosen = said or order
	if chosen == "DMY":
		return _build(_year(parts["year"]), b, a)
	if chosen == "MDY":
		return _build(_year(parts["year"]), a, b)
	return None


def find_dates(text: str, order: str | None = None) -> list[tuple[dt.date, int, int]]:
	"""Every date printed in the text, as (date, start, end), in reading order."""
	found: list[tuple[dt.date, int, int]] = []
	taken: list[tuple[int, int]] = []
	plain = _unaccented(text or "")
	for kind, pattern in _patterns():
		for m in pattern.finditer(plain):
			if any(m.start() < end and start < m.end() for start, end in taken):
				continue
			value = _from_match(kind, m, order)
			if value is not None:
				found.append((value, m.start(), m.end()))
				taken.append((m.start(), m.end()))
	return sorted(found, key=lambda f: f[1])


def parse_date(text, order: str | None = None) -> dt.date | None:
	"""The one date a value prints ("28/11/2022", "7. Mai 2014", "August 3 , 2014"); None if not one."""
	if text is None:
		return None
	if isinstance(text, dt.datetime):
		return text.date()
	if isinstance(text, dt.date):
		return text
	raw = str(text).strip()
	dates = find_dates(raw, order)
	if len(dates) != 1:
		return None
	value, start, end = dates[0]
	rest = (raw[:start] + raw[end:]).strip(" .,;:()")
	return value if not rest else None


def document_order(texts) -> str | None:
	"""The day/month order a document's own unambiguous numeric dates show (one document, one format)."""
	seen = set()
	for text in texts:
		for m in _patterns()[3][1].finditer(text or ""):
			said = numeric_order(int(m["a"]), int(m["b"]))
			if said and int(m["a"]) != int(m["b"]):
				seen.add(said)
	return seen.pop() if len(seen) == 1 else None


def site_order(date_format: str | None) -> str | None:
	"""DMY or MDY from a site's date format ("dd-mm-yyyy", "mm/dd/yyyy"); None when it does not say."""
	text = (date_format or "").lower()
	day, month = text.find("dd"), text.find("mm")
	if day < 0 or month < 0 or text.startswith("yyyy"):
		return None
	return "DMY" if day < month else "MDY"


# An amount as printed: digits with separators, a sign or parentheses, a currency sign or code.
_AMOUNT_TEXT = re.compile(r"^\(?[-−]?\s*[\d][\d\s.,'’]*\)?\s*[-−]?$")
_SIGNS = sorted(CURRENCY_SIGNS, key=len, reverse=True)


def split_currency(text: str) -> tuple[str, str | None]:
	"""The text without its currency sign or code, and the sign or code found (as printed, upper case)."""
	raw = " ".join(str(text).split())
	upper = raw.upper()
	for sign in _SIGNS:
		if sign.isalpha() or sign.endswith("."):
			m = re.search(rf"(?<![A-Z]){re.escape(sign)}(?![A-Z])", upper)
		else:
			m = re.search(re.escape(sign), upper)
		if m:
			return (raw[: m.start()] + " " + raw[m.end() :]).strip(), sign
	for m in re.finditer(r"(?<![A-Za-z0-9])([A-Z]{3})(?![A-Za-z0-9])", raw):
		if m.group(1) in iso_currencies():
			return (raw[: m.start()] + " " + raw[m.end() :]).strip(), m.group(1)
	return raw, None


def parse_amount(text) -> float | None:
	"""A printed amount as a number: 1,234.56 / 1.234,56 / 1 234,56 / € 189,00- / (12.00); None if not one."""
	from price_parser import Price

	if text is None:
		return None
	if isinstance(text, bool):
		return None
	if isinstance(text, int | float):
		return float(text)
	number, _ = split_currency(text)
	number = number.replace("−", "-").strip()
	if not number or "%" in number or not _AMOUNT_TEXT.match(number):
		return None
	negative = number.startswith(("(", "-")) or number.endswith("-")
	digits = number.strip("()- ").replace(" ", "").replace("’", "'")
	if re.fullmatch(r"\d{1,3}(,\d{3})+", digits) or re.fullmatch(r"\d{1,3}(\.\d{3})+", digits):
		value = float(re.sub(r"[.,]", "", digits))  # only thousands groups: "1,234", "1.234.567"
	else:
		parsed = Price.fromstring(digits).amount
		if parsed is None:
			return None
		value = float(parsed)
	return -value if negative else value


def currency_code(text) -> str | None:
	"""An ISO code as printed, or the code of a currency sign; None when neither."""
	if not text:
		return None
	raw = str(text).strip().upper()
	if raw in CURRENCY_SIGNS:
		return CURRENCY_SIGNS[raw]
	if raw in iso_currencies():
		return raw
	return None
