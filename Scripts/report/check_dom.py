#!/usr/bin/env python3
"""Checks a DOM that headless Chromium dumped (`chromium --dump-dom`) from a pushtrail
report.

    check_dom.py DOM_FILE [--expect TEXT]... [--hostile]

Every element and attribute must be one the report itself writes (so markup smuggled
in through payload strings did not become elements or attributes), no attribute
value may hold a URL scheme, and each --expect text must appear in the page's text.
With --hostile, each attack string from Tests/Fixtures/xss.ndjson must appear as text.
"""
import html.parser
import sys

ELEMENTS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "code",
            "p", "table", "thead", "tbody", "tr", "th", "td", "span", "main", "ol", "ul", "li", "div",
            "time", "strong", "footer"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "datetime"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.text = []
        self.counts = {}

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in ELEMENTS:
            self.problems.append(f"unexpected element <{tag}>")
        for name, value in attrs:
            if name not in ATTRIBUTES:
                self.problems.append(f"unexpected attribute {name}= on <{tag}>")
            if value and ":" in value and tag != "meta" and name != "datetime":
                self.problems.append(f"attribute {name}={value!r} on <{tag}> holds a scheme")

    def handle_data(self, data):
        self.text.append(data)


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    page = Page()
    with open(args[0], encoding="utf-8") as f:
        page.feed(f.read())
    text = "".join(page.text)
    expected = [args[i + 1] for i, a in enumerate(args) if a == "--expect"]
    if "--hostile" in args:
        import importlib.util, os
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        spec = importlib.util.spec_from_file_location("xss", os.path.join(root, "Tests/Fixtures/make-xss.py"))
        xss = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(xss)
        expected += xss.ATTACKS + [xss.THREAD, xss.USER]
    for e in expected:
        if e not in text:
            page.problems.append(f"text not shown: {e!r}")
    if page.counts.get("li", 0) == 0:
        page.problems.append("no timeline entries rendered")
    if page.problems:
        for p in page.problems[:20]:
            print(f"check_dom: {p}")
        sys.exit(1)
    print(f"check_dom: ok: {sum(page.counts.values())} elements, {page.counts.get('li', 0)} list items, "
          f"{len(expected)} expected texts shown")


if __name__ == "__main__":
    main()
