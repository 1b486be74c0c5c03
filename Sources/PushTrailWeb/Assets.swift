extension Site {
    /// `/assets/site.css`: the timeline's look (`report`'s), and the site's bar, forms
    /// and tables. Sized for phones (375 px) up to desktops; focus always visible.
    public static let stylesheet =
        Timeline.stylesheet + """
            body { max-width: 1100px; }
            a { color: #0a58ca; }
            a:focus-visible, button:focus-visible, input:focus-visible, pre:focus-visible, main:focus-visible { \
            outline: 3px solid #ff8c00; outline-offset: 2px; }
            .skip { position: absolute; left: -9999px; }
            .skip:focus { left: 12px; top: 12px; background: #fff; padding: 8px 12px; z-index: 1; }
            .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); \
            white-space: nowrap; }
            .bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; margin: 0 0 20px; \
            padding-bottom: 12px; border-bottom: 1px solid var(--line); }
            .bar nav { display: flex; gap: 12px; align-items: baseline; }
            .bar nav .home { font-weight: 700; font-size: 17px; color: var(--ink); text-decoration: none; }
            .search { display: flex; gap: 6px; flex: 1 1 260px; }
            .search input { flex: 1; min-width: 0; }
            .search.big { margin: 8px 0 16px; }
            .search.big input { font-size: 18px; padding: 10px; }
            .signout { margin: 0; }
            input, button { font: inherit; padding: 6px 8px; border: 1px solid #8e8e93; border-radius: 6px; \
            background: #fff; color: var(--ink); }
            button { background: #0a58ca; border-color: #0a58ca; color: #fff; cursor: pointer; }
            .signout button { background: #fff; color: var(--ink); border-color: var(--line); }
            h2 { font-size: 18px; margin: 24px 0 8px; }
            h3 { font-size: 15px; margin: 16px 0 6px; overflow-wrap: anywhere; }
            .asof { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; \
            margin: 0 0 16px; }
            .asof form { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
            .asof input { flex: 1 1 200px; min-width: 0; }
            .asof p { margin: 6px 0 0; overflow-wrap: anywhere; }
            .asof .permalink { font-weight: 600; }
            .filters { display: flex; flex-wrap: wrap; gap: 8px 12px; align-items: flex-end; margin: 0 0 16px; }
            .filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--dim); }
            .filters input { font-size: 14px; width: 12rem; max-width: 100%; }
            .scroll { overflow-x: auto; }
            body.narrow { max-width: 40rem; }
            .signin { display: flex; flex-direction: column; gap: 8px; max-width: 28rem; }
            table { border-collapse: collapse; background: #fff; border-radius: 8px; margin: 8px 0 16px; }
            th, td { text-align: left; padding: 6px 12px; border-bottom: 1px solid var(--line); vertical-align: top; }
            th { color: var(--dim); font-weight: 500; }
            .asks li, .events li, .pushes li, .presses li, .findings li { margin: 6px 0; overflow-wrap: anywhere; }
            .events, .pushes, .presses { list-style: none; padding: 0; }
            .events li, .pushes li, .presses li { background: #fff; border-radius: 8px; padding: 8px 12px; }
            .pushes li.flagged { border-left: 4px solid var(--warn); }
            .events time, .pushes time, .presses time, .findings time { font-variant-numeric: tabular-nums; \
            color: var(--dim); }
            .type { font-weight: 600; }
            .good { color: var(--good); } .bad { color: var(--bad); } .warn { color: var(--warn); }
            .press.ok { color: var(--good); } .press.rejected { color: var(--warn); }
            .press.failed { color: var(--bad); }
            pre.json { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 12px; \
            overflow-x: auto; font: 12px/1.45 ui-monospace, Menlo, Consolas, monospace; white-space: pre-wrap; \
            overflow-wrap: anywhere; }
            .entry .meta a { color: inherit; }
            footer a { color: inherit; }
            @media (max-width: 600px) { .bar { gap: 8px; } .signout { order: 2; } .filters input { width: 100%; } \
            .filters label { flex: 1 1 100%; } }

            """

    /// `/assets/live.js`: turns the live tail's list into a live one. It reads each new
    /// event from the server's SSE stream and adds a row made of text nodes (never
    /// markup from the stream), newest first; without it the page keeps its refresh link.
    public static let script = """
        "use strict";
        (function () {
          var list = document.getElementById("live-events");
          var status = document.getElementById("live-status");
          if (!list || !status || !window.EventSource) { return; }
          var keep = 200;
          var source = new EventSource(list.getAttribute("data-stream"));
          var after = Number(list.getAttribute("data-after")) || 0;
          function segment(value) {
            var text = String(value || "");
            return /^[.]+$/.test(text) ? text.replace(/[.]/g, "%2E") : encodeURIComponent(text);
          }
          function link(href, text) {
            var a = document.createElement("a");
            a.href = href;
            a.textContent = text;
            return a;
          }
          function add(line) {
            var e = line.event || {};
            var li = document.createElement("li");
            var time = document.createElement("time");
            time.dateTime = String(e.at || "");
            time.textContent = String(e.at || "");
            li.appendChild(time);
            var type = document.createElement("span");
            type.className = "type";
            type.textContent = " " + String(e.type || "event") + " ";
            li.appendChild(type);
            li.appendChild(link("/events/" + segment(e.id), String(e.id || "")));
            var meta = document.createElement("span");
            meta.className = "meta";
            meta.appendChild(document.createTextNode(" #" + String(line.seq) + " · user "));
            meta.appendChild(link("/users/" + segment(e.user), String(e.user || "")));
            li.appendChild(meta);
            list.insertBefore(li, list.firstChild);
            while (list.children.length > keep) { list.removeChild(list.lastChild); }
          }
          source.onopen = function () {
            status.textContent = "Live: new events appear at the top as they arrive.";
          };
          source.onmessage = function (message) {
            var line;
            try { line = JSON.parse(message.data); } catch (error) { return; }
            if (typeof line.seq !== "number" || line.seq <= after) { return; }
            after = line.seq;
            add(line);
          };
          source.onerror = function () {
            status.textContent = "The live stream was interrupted; reconnecting…";
          };
        })();

        """
}
