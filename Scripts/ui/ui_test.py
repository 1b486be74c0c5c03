#!/usr/bin/env python3
"""Walks the support site in a real browser (Debian's headless Chromium through Selenium
and chromedriver) against a real pushtrail-server on loopback.

    ui_test.py PUSHTRAIL PUSHTRAIL_SERVER OUT_DIR

The store holds the sample events (Samples/events.ndjson), the XSS corpus
(Tests/Fixtures/xss.ndjson) and a user named "1103" (so that "1103" names a task and a
user). The checks:

- signing in through the form returns to the page first asked for;
- each support story of Samples/STORIES.md, end to end: search, open, read the answer
  off the page, step the "as of" control, download the reproduction and compare its
  bytes with `pushtrail export ID -o -`;
- a pinned link shows the same page after new events arrive;
- the live tail adds a new event without a reload, and without JavaScript offers a
  refresh link;
- every page, and the search box with each attack string, holds only the site's own
  elements and attributes, links only within the server, and shows every attack string
  as text;
- every page: one h1, a label for every field, html lang, the skip link first in the
  tab order, focus reaching the search box by keyboard, no sideways scrolling at 375 px;
- a screenshot of each page at 375 and 1440 px wide, in OUT_DIR.

Prints one line per check and exits 1 if any failed.
"""
import http.client
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
spec = importlib.util.spec_from_file_location("xss", os.path.join(ROOT, "Tests/Fixtures/make-xss.py"))
XSS = importlib.util.module_from_spec(spec)
spec.loader.exec_module(XSS)

# What the site writes, and nothing else may appear.
ELEMENTS = {"html", "head", "meta", "title", "link", "script", "body", "a", "header", "nav", "form", "label",
            "input", "button", "main", "footer", "h1", "h2", "h3", "p", "dl", "dt", "dd", "code", "pre", "ul", "ol",
            "li", "table", "thead", "tbody", "tr", "th", "td", "span", "strong", "time", "section", "div", "br"}
ATTRIBUTES = {"lang", "charset", "name", "content", "rel", "href", "src", "defer", "class", "id", "method", "action",
              "type", "value", "placeholder", "for", "role", "aria-label", "aria-labelledby", "aria-live", "tabindex",
              "autofocus", "autocomplete", "required", "scope", "datetime", "data-stream", "data-after"}

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


class Site:
    def __init__(self, pt, server, out):
        self.pt, self.server_binary, self.out = pt, server, out
        self.work = tempfile.mkdtemp(prefix="pushtrail-ui-")
        self.store = os.path.join(self.work, "store")
        self.downloads = os.path.join(self.work, "downloads")
        os.makedirs(self.downloads)
        self.run(["ingest", os.path.join(ROOT, "Samples/events.ndjson")])
        self.run(["ingest", os.path.join(ROOT, "Tests/Fixtures/xss.ndjson")])
        extra = {"type": "action", "id": "act-user-1103", "at": "2026-11-30T09:00:00Z", "user": "1103",
                 "task_id": 1103, "action": "open", "outcome": "ok"}
        self.ingest_lines([json.dumps(extra)])
        self.read_token = self.run(["token", "add", "support", "--role", "read"]).strip()
        self.admin_token = self.run(["token", "add", "admin", "--role", "admin"]).strip()
        self.proc = subprocess.Popen([server, "--store", self.store, "--listen", "127.0.0.1:0"],
                                     stderr=subprocess.PIPE, text=True)
        self.port = None
        deadline = time.time() + 30
        while self.port is None and time.time() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"127\.0\.0\.1:(\d+)", line)
            if m:
                self.port = int(m.group(1))
        if self.port is None:
            raise SystemExit("ui-test: the server did not start")
        self.base = f"http://127.0.0.1:{self.port}"
        self.driver = browser(self.downloads, javascript=True)

    def run(self, args, stdin=None):
        return subprocess.run([self.pt] + args + ["--store", self.store], input=stdin, check=True,
                              capture_output=True, text=stdin is None or isinstance(stdin, str)).stdout

    def ingest_lines(self, lines):
        subprocess.run([self.pt, "ingest", "-q", "--store", self.store], input="\n".join(lines) + "\n",
                       check=True, capture_output=True, text=True)

    def export(self, event_id, fmt):
        return subprocess.run([self.pt, "export", event_id, "--format", fmt, "-o", "-", "--store", self.store],
                              check=True, capture_output=True).stdout

    def get(self, path):
        self.driver.get(self.base + path)

    def close(self):
        self.driver.quit()
        self.proc.terminate()
        self.proc.wait(10)
        shutil.rmtree(self.work, ignore_errors=True)


def browser(downloads, javascript):
    options = Options()
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--no-first-run", "--lang=en-US"]:
        options.add_argument(arg)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    prefs = {"download.default_directory": downloads, "download.prompt_for_download": False}
    if not javascript:
        prefs["profile.managed_default_content_settings.javascript"] = 2
    options.add_experimental_option("prefs", prefs)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"),
                              options=options)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})
    driver.set_window_size(1440, 1000)
    return driver


def text(site):
    return site.driver.find_element(By.TAG_NAME, "body").text


def main_text(site):
    return site.driver.find_element(By.ID, "main").text


def sign_in(site):
    site.get("/users/u_alice")
    check("Sign in" in site.driver.title, "a page without a session shows the sign-in form")
    field = site.driver.find_element(By.ID, "token")
    field.send_keys(site.read_token)
    field.send_keys(Keys.ENTER)
    WebDriverWait(site.driver, 10).until(lambda d: "/users/u_alice" in d.current_url)
    check(site.driver.title.startswith("User u_alice"), "signing in returns to the page asked for")
    check(site.read_token not in site.driver.page_source, "the token is not on the page")


def search(site, term):
    site.get("/")
    box = site.driver.find_element(By.ID, "q-home")
    box.send_keys(term)
    home = site.driver.current_url
    box.send_keys(Keys.ENTER)
    # The home page's URL has no "/search" either: wait for the browser to leave it, then
    # for the page it lands on (a search page, or the one page the search found) to load.
    WebDriverWait(site.driver, 10).until(
        lambda d: d.current_url != home
        and d.execute_script("return document.readyState") == "complete"
        and ("/search" not in d.current_url or "Search" in d.title))


def download(site, link_text):
    """Clicks the link and returns the bytes of the file it downloads."""
    for name in os.listdir(site.downloads):
        os.remove(os.path.join(site.downloads, name))
    site.driver.find_element(By.LINK_TEXT, link_text).click()
    # Chromium may create the file before it has written it, beside a .crdownload that
    # it renames over it: the download is done once no .crdownload is left and the
    # file has stopped changing.
    deadline = time.time() + 15
    last = None
    while time.time() < deadline:
        names = os.listdir(site.downloads)
        done = [n for n in names if not n.endswith(".crdownload")]
        if done and len(done) == len(names):
            with open(os.path.join(site.downloads, done[0]), "rb") as f:
                data = f.read()
            if data and data == last:
                return done[0], data
            last = data
        time.sleep(0.2)
    return None, last


def compare_download(site, event_id, fmt):
    site.get("/events/" + urllib.parse.quote(event_id, safe=""))
    name, data = download(site, f"Download {fmt}")
    expected = site.export(event_id, fmt)
    check(data is not None and data == expected,
          f"event {event_id[:8]}: the {fmt} download ({name}) is byte for byte `export --format {fmt} -o -`")


MEMBERS = "ol.timeline > li.entry:not(.outside)"


def step_back_and_forth(site, thread, story):
    """On the thread's page, Previous event drops its last event and Next event brings
    it back: the "as of" control steps through the thread."""
    site.get("/threads/" + urllib.parse.quote(thread, safe=""))
    now = len(site.driver.find_elements(By.CSS_SELECTOR, MEMBERS))
    site.driver.find_element(By.PARTIAL_LINK_TEXT, "Previous event").click()
    WebDriverWait(site.driver, 10).until(lambda d: "at=%40" in d.current_url)
    before = len(site.driver.find_elements(By.CSS_SELECTOR, MEMBERS))
    site.driver.find_element(By.PARTIAL_LINK_TEXT, "Next event").click()
    WebDriverWait(site.driver, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, MEMBERS)) != before)
    again = len(site.driver.find_elements(By.CSS_SELECTOR, MEMBERS))
    check(before == now - 1 and again == now,
          f"{story}) on {thread}, Previous event shows {before} of {now} events and Next event all {again} again")


def story_a(site):
    """I pressed complete and nothing happened: Alice, task 1102."""
    search(site, "1102")
    check(site.driver.current_url.endswith("/tasks/1102"), "a) searching 1102 lands on task 1102")
    body = main_text(site)
    check("u_alice pressed Complete → failed" in body and "HTTP 500: Internal Server Error" in body,
          "a) the failed complete and the server's 500 are on the task's page")
    at = site.driver.find_element(By.ID, "at")
    at.clear()
    at.send_keys("2026-11-08T23:59:00Z")
    at.send_keys(Keys.ENTER)
    WebDriverWait(site.driver, 10).until(lambda d: "at=2026-11-08T23%3A59%3A00Z" in d.current_url)
    facts = site.driver.find_element(By.CSS_SELECTOR, "dl.facts").text
    check("State\nactive" in facts and "Completions\n0" in facts,
          "a) as of 2026-11-08T23:59Z the task is active with 0 completions")
    before = main_text(site)
    check("Overdue: Clean gutters" not in before, "a) the next morning's overdue notification is not shown yet")
    site.driver.find_element(By.PARTIAL_LINK_TEXT, "Next event").click()
    WebDriverWait(site.driver, 10).until(lambda d: "at=%40" in d.current_url)
    after = main_text(site)
    check(len(after) > len(before) and "Overdue: Clean gutters" in after,
          "a) Next event steps to the overdue notification")
    site.driver.find_element(By.PARTIAL_LINK_TEXT, "Previous event").click()
    WebDriverWait(site.driver, 10).until(
        lambda d: "Overdue: Clean gutters" not in d.find_element(By.ID, "main").text)
    check("completed" not in site.driver.find_element(By.CSS_SELECTOR, "dl.facts").text,
          "a) Previous event steps back: the task is not completed there")
    compare_download(site, "2c3728f5-ac04-4973-862a-20422bdae4b1", "apns")


def story_b(site):
    """The buttons were wrong: Ben, task 1109."""
    search(site, "u_ben")
    check(site.driver.current_url.endswith("/users/u_ben"), "b) searching u_ben lands on Ben's page")
    body = main_text(site)
    check("category_state_mismatch" in body, "b) the category_state_mismatch finding is on Ben's page")
    check("u_ben pressed Complete → rejected" in body and "HTTP 409" in body,
          "b) the rejected complete and the 409 are on Ben's page")
    site.driver.find_element(By.LINK_TEXT, "task-1109").click()
    WebDriverWait(site.driver, 10).until(lambda d: "/threads/task-1109" in d.current_url)
    banners = site.driver.find_elements(By.CSS_SELECTOR, ".banner")
    buttons = [li.text for li in site.driver.find_elements(By.CSS_SELECTOR, "ul.buttons li")]
    check(len(banners) >= 2 and "Mark In Progress" in buttons and "Uncancel" in buttons,
          "b) the thread draws the banners with the buttons each category showed")
    step_back_and_forth(site, "task-1109", "b")
    compare_download(site, "14557b3c-ed72-4565-89d3-91e6848930e4", "apns")


def story_c(site):
    """I never got it: Dana, task 1106, a dead token."""
    search(site, "u_dana")
    rows = site.driver.find_elements(By.CSS_SELECTOR, "table tbody tr")
    dead = [r.text for r in rows if "declared dead" in r.text]
    check(len(rows) == 2 and len(dead) == 1 and dead[0].startswith("d6c6"),
          "c) Dana's page lists two devices, the old one declared dead")
    check("d6c69c92bde0762d7472b4955224f00350039fe72ddf3a028045c635a4c724f6" not in site.driver.page_source,
          "c) the device token is masked for a read token")
    site.get("/audit?user=u_dana")
    site.driver.find_element(By.LINK_TEXT, "sent_after_unregistered").click()
    findings = site.driver.find_elements(By.CSS_SELECTOR, "ol.findings li")
    check(len(findings) == 2 and all("sent_after_unregistered" in f.text for f in findings),
          "c) the audit counts and lists the two sends to the dead token")
    findings[0].find_element(By.PARTIAL_LINK_TEXT, "529bda1f").click()
    WebDriverWait(site.driver, 10).until(lambda d: "/events/529bda1f" in d.current_url)
    check("sent_after_unregistered" in main_text(site), "c) the finding links to its event's page")
    step_back_and_forth(site, "task-1106", "c")
    compare_download(site, "0e90b559-d2ee-44e0-8ebf-2bf9e2b2a50d", "apns")


def story_d(site):
    """No Mark In Progress button: Farah, task 1301, Android."""
    search(site, "task-1301")
    cards = site.driver.find_elements(By.CSS_SELECTOR, ".card")
    first = cards[0] if cards else None
    seen = [li.text for li in first.find_elements(By.CSS_SELECTOR, "li.seen")] if first else []
    unseen = [li.text for li in first.find_elements(By.CSS_SELECTOR, "li.unseen")] if first else []
    check(seen == ["EDIT", "COMPLETE", "CANCEL"] and len(unseen) == 1 and "not shown" in unseen[0],
          "d) the Android card shows three buttons and Mark In Progress struck, marked not shown")
    check("too_many_actions" in main_text(site), "d) the too_many_actions finding is highlighted")
    step_back_and_forth(site, "task-1301", "d")
    compare_download(site, "57d84e5b-548b-4986-a627-9bc62d0e65fa", "fcm")
    compare_download(site, "57d84e5b-548b-4986-a627-9bc62d0e65fa", "adb")


def story_e_to_h(site):
    search(site, "994be680-ed7e-4653-8ce7-77e97f6882f5")
    check("/events/994be680" in site.driver.current_url and "fcm_notification_message" in main_text(site),
          "e) searching the notification's id lands on its page, with fcm_notification_message")
    check('"notification"' in site.driver.find_element(By.CSS_SELECTOR, "pre.json").text,
          "e) the event's page shows its JSON with the notification block")
    step_back_and_forth(site, "task-1302", "e")
    compare_download(site, "994be680-ed7e-4653-8ce7-77e97f6882f5", "fcm")
    search(site, "u_hana")
    rows = [r.text for r in site.driver.find_elements(By.CSS_SELECTOR, "table tbody tr")]
    check(any(r.startswith("CWiw") and "declared dead" in r for r in rows),
          "f) Hana's reinstalled-away token is declared dead by FCM's 404")
    step_back_and_forth(site, "task-1303", "f")
    compare_download(site, "2416431e-719e-452d-aa69-6e3be4446481", "fcm")
    search(site, "task-1304")
    check(len(site.driver.find_elements(By.CSS_SELECTOR, ".banner")) >= 3
          and len(site.driver.find_elements(By.CSS_SELECTOR, ".card")) >= 3
          and not site.driver.find_elements(By.CSS_SELECTOR, "p.alert"),
          "g) Ivan's thread has iPhone banners and tablet cards, and no finding")
    step_back_and_forth(site, "task-1304", "g")
    compare_download(site, "07e7d38f-f689-4b99-99fd-641d887bf33b", "apns")
    compare_download(site, "fd1b3207-a385-4ae9-82c3-f841c84dc346", "adb")
    search(site, "240a7ef4-a58a-4f06-a4d3-972beb99677c")
    check("fcm_invalid_data" in main_text(site), "h) the GFCI notification's page shows fcm_invalid_data")
    step_back_and_forth(site, "task-1305", "h")
    compare_download(site, "240a7ef4-a58a-4f06-a4d3-972beb99677c", "fcm")


def search_cases(site):
    search(site, "gutters")
    items = site.driver.find_elements(By.CSS_SELECTOR, "ol.events li")
    expected = site.run(["log", "--grep", "gutters", "--json"]).splitlines()
    newest = json.loads(expected[-1])["event"]["id"]
    check(len(items) == len(expected) and newest in items[0].text,
          f"free text lists the {len(expected)} events `log --grep` finds, newest first")
    search(site, "1103")
    links = [a.text for a in site.driver.find_elements(By.CSS_SELECTOR, "ul.asks a")]
    check("task 1103" in links and "user 1103" in links, "a term naming a task and a user lists both")
    search(site, "no such thing anywhere")
    check("No user, task, thread or event is named that" in main_text(site), "a search with no match says so")


def pinned_text(site):
    """The page's content without its "as of" bar, whose links to the next event may grow."""
    return site.driver.execute_script(
        "var m = document.getElementById('main').cloneNode(true);"
        "m.querySelectorAll('nav.asof').forEach(function (n) { n.remove(); }); return m.innerText;")


def pinned(site):
    site.get("/threads/task-1102")
    permalink = site.driver.find_element(By.CSS_SELECTOR, "a.permalink").get_attribute("href")
    site.driver.get(permalink)
    before = pinned_text(site)
    late = {"type": "action", "id": "act-late-ui", "at": "2026-11-08T20:00:00Z", "user": "u_alice",
            "task_id": 1102, "action": "open", "outcome": "ok", "thread_id": "task-1102"}
    site.ingest_lines([json.dumps(late)])
    site.driver.get(permalink)
    check(pinned_text(site) == before and "act-late-ui" not in before,
          "a pinned link shows exactly the same page after new events arrive")
    site.get("/threads/task-1102")
    check("act-late-ui" in main_text(site), "the unpinned page shows the new event")


def live(site):
    site.get("/live")
    site.driver.execute_script("window.__notReloaded = true;")
    WebDriverWait(site.driver, 10).until(
        lambda d: "Live: new events" in d.find_element(By.ID, "live-status").text)
    fresh = {"type": "action", "id": "act-live-ui", "at": "2026-11-30T10:00:00Z", "user": "u_live",
             "task_id": 1101, "action": "open", "outcome": "ok"}
    site.ingest_lines([json.dumps(fresh)])
    try:
        WebDriverWait(site.driver, 10).until(
            lambda d: "act-live-ui" in d.find_element(By.ID, "live-events").text)
        arrived = True
    except TimeoutException:
        arrived = False
    check(arrived and site.driver.execute_script("return window.__notReloaded === true"),
          "the live tail shows a new event without a reload")
    plain = browser(site.downloads, javascript=False)
    try:
        plain.get(site.base + "/login")
        field = plain.find_element(By.ID, "token")
        field.send_keys(site.read_token)
        field.send_keys(Keys.ENTER)
        WebDriverWait(plain, 10).until(lambda d: "Sign in" not in d.title)
        plain.get(site.base + "/live")
        status = plain.find_element(By.ID, "live-status").text
        listed = plain.find_element(By.ID, "live-events").text
        check("Refresh" in status and "act-live-ui" in listed,
              f"without JavaScript the live tail lists the events and offers a refresh link ({status!r})")
    finally:
        plain.quit()


PAGES = [
    ("home", "/"), ("search", "/search?q=gutters"), ("user", "/users/u_alice"), ("thread", "/threads/task-1102"),
    ("task", "/tasks/1109?at=2026-11-18T08%3A00%3A00.818Z"), ("event", "/events/14557b3c-ed72-4565-89d3-91e6848930e4"),
    ("android-thread", "/threads/task-1301"), ("audit", "/audit?user=u_dana"),
    ("audit-form", "/audit"), ("live", "/live"),
]


def xss_pages():
    q = urllib.parse.quote
    pages = [("/users/" + q(XSS.USER, safe=""), True), ("/threads/" + q(XSS.THREAD, safe=""), True),
             ("/tasks/9001", False), ("/audit?user=" + q(XSS.USER, safe=""), False), ("/live", False)]
    pages += [("/events/" + q(f"00000000-0000-4000-8000-{i:012d}", safe=""), False) for i in range(len(XSS.ATTACKS))]
    pages += [("/search?q=" + q(a, safe=""), False) for a in XSS.ATTACKS]
    return pages


DOM = """
return Array.from(document.querySelectorAll('*')).map(function (e) {
  return [e.tagName.toLowerCase(), Array.from(e.attributes).map(function (a) { return [a.name, a.value]; })];
});
"""


def markup_problems(site):
    problems = []
    for tag, attributes in site.driver.execute_script(DOM):
        if tag not in ELEMENTS:
            problems.append(f"<{tag}>")
        for name, value in attributes:
            if name not in ATTRIBUTES:
                problems.append(f"{name}= on <{tag}>")
            if name in ("href", "src", "action", "data-stream") and not (
                    value.startswith("/") and not value.startswith("//") or name == "href" and value == "#main"):
                problems.append(f"{name}={value!r} leaves the server")
        if tag == "script" and dict(attributes).get("src") != "/assets/live.js":
            problems.append("a script other than the site's")
    return problems


def only_site_markup(site, path):
    problems = markup_problems(site)
    check(not problems and site.driver.title != "pwned",
          f"{path[:70]}: only the site's elements and attributes {problems[:3] if problems else ''}")


def xss(site):
    for path, every_attack in xss_pages():
        site.get(path)
        only_site_markup(site, path)
        if every_attack:
            body = text(site)
            missing = [a for a in XSS.ATTACKS if a.strip() not in body]
            check(not missing, f"{path[:50]}: every attack string shows as text {missing[:2]}")
    # The search box itself: typed, submitted, echoed.
    for attack in XSS.ATTACKS[:4]:
        site.get("/")
        box = site.driver.find_element(By.ID, "q-home")
        box.send_keys(attack)
        box.send_keys(Keys.ENTER)
        WebDriverWait(site.driver, 10).until(lambda d: "/search" in d.current_url)
        only_site_markup(site, "search box: " + attack)
        check(site.driver.find_element(By.ID, "q").get_attribute("value") == attack,
              "the search box shows the typed attack as its value, unchanged")


A11Y = """
var problems = [];
if (document.documentElement.lang !== 'en') problems.push('no lang');
if (document.querySelectorAll('h1').length !== 1) problems.push(document.querySelectorAll('h1').length + ' h1');
document.querySelectorAll('input:not([type=hidden])').forEach(function (i) {
  var labelled = i.getAttribute('aria-label') || (i.id && document.querySelector('label[for="' + i.id + '"]'))
      || i.closest('label');
  if (!labelled) problems.push('unlabelled input ' + (i.name || i.id));
});
if (document.documentElement.scrollWidth > window.innerWidth + 1)
  problems.push('sideways scroll ' + document.documentElement.scrollWidth + ' > ' + window.innerWidth);
return problems;
"""


def checkers_can_fail(site):
    """The checks above must see what they look for: markup added to a page, and a
    field without a label."""
    site.get("/users/u_alice")
    site.driver.execute_script(
        "document.getElementById('main').insertAdjacentHTML('beforeend',"
        " '<iframe src=\"https://example.com/\"></iframe><a href=\"javascript:alert(1)\">x</a>');")
    problems = markup_problems(site)
    check(any("iframe" in p for p in problems) and any("javascript:" in p for p in problems),
          "the markup check catches an added iframe and a javascript: link")
    site.driver.execute_script("document.getElementById('main').insertAdjacentHTML('beforeend', '<input name=x>');")
    check("unlabelled input x" in site.driver.execute_script(A11Y), "the accessibility check catches an unlabelled field")


def accessible(site):
    for name, path in PAGES:
        for width in (1440, 375):
            site.driver.set_window_size(width, 1000)
            site.get(path)
            problems = site.driver.execute_script(A11Y)
            check(not problems, f"{name} at {width} px: one h1, labelled fields, lang, no sideways scroll {problems}")
            height = site.driver.execute_script("return document.documentElement.scrollHeight")
            site.driver.set_window_size(width, min(max(height, 600), 6000))
            site.driver.save_screenshot(os.path.join(site.out, f"{name}-{width}.png"))
        site.driver.set_window_size(1440, 1000)
        site.get(path)
        body = site.driver.find_element(By.TAG_NAME, "body")
        body.send_keys(Keys.TAB)
        first = site.driver.switch_to.active_element
        reached = False
        for _ in range(8):
            if site.driver.switch_to.active_element.get_attribute("name") == "q":
                reached = True
                break
            site.driver.switch_to.active_element.send_keys(Keys.TAB)
        check(first.get_attribute("class") == "skip" and reached,
              f"{name}: the skip link comes first and the keyboard reaches the search box")


def main():
    pt, server, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    site = Site(pt, server, out)
    try:
        sign_in(site)
        story_a(site)
        story_b(site)
        story_c(site)
        story_d(site)
        story_e_to_h(site)
        search_cases(site)
        pinned(site)
        live(site)
        xss(site)
        checkers_can_fail(site)
        accessible(site)
    finally:
        site.close()
    print(f"{len(failures)} of the checks failed" if failures else "every check passed", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
