#!/usr/bin/env python3
"""Checks a DOM that headless Chromium dumped (`chromium --dump-dom`) from a pushtrail
report.

    check_dom.py DOM_FILE [--expect TEXT]... [--hostile] [--banners N] [--cards N]
                 [--card TITLE [--body TEXT] [--seen A,B,C] [--unseen X,Y]]...

Every element and attribute must be one the report itself writes (so markup smuggled
in through payload strings did not become elements or attributes), no attribute
value may hold a URL scheme, and each --expect text must appear in the page's text.
With --hostile, each attack string from Tests/Fixtures/xss.ndjson must appear as text.

Android cards (div.card): every card shows at most three buttons (li.seen), and every
button it marks unseen (li.unseen) carries the text "not shown" beside its label, so
colour is never the only sign. --banners and --cards give the exact number of iOS
banners and Android cards. --card picks the card whose title is TITLE; the --body,
--seen and --unseen after it say its body text and its seen and unseen button labels
(comma-separated, in order; empty for none).
"""
import html.parser
import sys

ELEMENTS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "dl", "dt", "dd", "code",
            "p", "table", "thead", "tbody", "tr", "th", "td", "span", "main", "ol", "ul", "li", "div",
            "time", "strong", "footer"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "datetime"}


VOID = {"meta", "br", "img", "input", "link", "hr", "wbr", "source"}


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []
        self.text = []
        self.counts = {}
        self.classes = {}
        # The open elements, each as (tag, classes); and what each card holds.
        self.stack = []
        self.cards = []

    def inside(self, tag, cls):
        return any(t == tag and cls in c for t, c in self.stack)

    def handle_starttag(self, tag, attrs):
        self.counts[tag] = self.counts.get(tag, 0) + 1
        if tag not in ELEMENTS:
            self.problems.append(f"unexpected element <{tag}>")
        for name, value in attrs:
            if name not in ATTRIBUTES:
                self.problems.append(f"unexpected attribute {name}= on <{tag}>")
            if value and ":" in value and tag != "meta" and name != "datetime":
                self.problems.append(f"attribute {name}={value!r} on <{tag}> holds a scheme")
        classes = set((dict(attrs).get("class") or "").split())
        for c in classes:
            self.classes[(tag, c)] = self.classes.get((tag, c), 0) + 1
        if tag in VOID:
            return
        if tag == "div" and "card" in classes:
            self.cards.append({"title": "", "body": "", "seen": [], "unseen": []})
        elif self.inside("div", "card") and tag == "li" and "seen" in classes:
            self.cards[-1]["seen"].append({"label": "", "text": ""})
        elif self.inside("div", "card") and tag == "li" and "unseen" in classes:
            self.cards[-1]["unseen"].append({"label": "", "text": ""})
        self.stack.append((tag, classes))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        # Close up to the matching element (the browser's DOM is well formed).
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        if not self.inside("div", "card"):
            return
        card = self.cards[-1]
        if self.inside("p", "title"):
            card["title"] += data
        elif self.inside("p", "body"):
            card["body"] += data
        for kind in ("seen", "unseen"):
            if self.inside("li", kind) and card[kind]:
                button = card[kind][-1]
                button["text"] += data
                if kind == "seen" or self.inside("span", "label"):
                    button["label"] += data


def labels(buttons):
    return [b["label"].strip() for b in buttons]


def check_cards(page, args):
    """The rules every Android card keeps, then the --banners, --cards and --card checks."""
    for card in page.cards:
        if len(card["seen"]) > 3:
            page.problems.append(f"card {card['title']!r} shows {len(card['seen'])} buttons, over Android's 3")
        for b in card["unseen"]:
            if "not shown" not in b["text"] or not b["label"].strip():
                page.problems.append(f"card {card['title']!r}: unseen button {b['text']!r} lacks its label or "
                                     f"the text 'not shown'")
    for flag, found in (("--banners", page.classes.get(("div", "banner"), 0)), ("--cards", len(page.cards))):
        if flag in args:
            wanted = int(args[args.index(flag) + 1])
            if found != wanted:
                page.problems.append(f"{flag}: {found} on the page, expected {wanted}")
    card = None
    i = 0
    while i < len(args):
        flag = args[i]
        value = args[i + 1] if i + 1 < len(args) else ""
        if flag == "--card":
            matches = [c for c in page.cards if c["title"].strip() == value]
            card = matches[0] if matches else None
            if card is None:
                page.problems.append(f"no Android card titled {value!r}")
        elif flag in ("--body", "--seen", "--unseen") and card is not None:
            if flag == "--body" and card["body"].strip() != value:
                page.problems.append(f"card {card['title']!r}: body {card['body'].strip()!r}, expected {value!r}")
            if flag in ("--seen", "--unseen"):
                wanted = [v for v in value.split(",") if v]
                found = labels(card[flag[2:]])
                if found != wanted:
                    page.problems.append(f"card {card['title']!r}: {flag[2:]} buttons {found}, expected {wanted}")
        i += 1


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
    check_cards(page, args)
    if page.problems:
        for p in page.problems[:20]:
            print(f"check_dom: {p}")
        sys.exit(1)
    print(f"check_dom: ok: {sum(page.counts.values())} elements, {page.counts.get('li', 0)} list items, "
          f"{len(expected)} expected texts shown, {len(page.cards)} Android cards")


if __name__ == "__main__":
    main()
