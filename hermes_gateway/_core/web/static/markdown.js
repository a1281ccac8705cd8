/* Markdown to DOM nodes, safely: every piece of model text goes through textContent or a text node,
   never innerHTML. Links keep only http(s) and mailto targets; anything else (javascript:, data:) is
   shown as plain text. Covers what chat replies use: paragraphs, headings, lists, quotes, code fences,
   `code`, **bold**, *italic*, [links](https://...). */
"use strict";
const Markdown = (() => {
  const SAFE_LINK = /^(https?:\/\/|mailto:)/i;

  function inline(parent, text) {
    const pattern = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|(?<![A-Za-z0-9])_([^_\n]+)_(?![A-Za-z0-9])|\[([^\]\n]*)\]\(([^)\s]*)\)/g;
    let last = 0;
    let m;
    while ((m = pattern.exec(text)) !== null) {
      if (m.index > last) parent.appendChild(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) {
        const code = document.createElement("code");
        code.textContent = m[2];
        parent.appendChild(code);
      } else if (m[3] !== undefined || m[4] !== undefined) {
        const strong = document.createElement("strong");
        inline(strong, m[3] !== undefined ? m[3] : m[4]);
        parent.appendChild(strong);
      } else if (m[5] !== undefined || m[6] !== undefined) {
        const em = document.createElement("em");
        inline(em, m[5] !== undefined ? m[5] : m[6]);
        parent.appendChild(em);
      } else {
        const label = m[7], target = m[8];
        if (SAFE_LINK.test(target)) {
          const a = document.createElement("a");
          a.href = target;
          a.rel = "noopener noreferrer nofollow";
          a.target = "_blank";
          a.textContent = label || target;
          parent.appendChild(a);
        } else {
          parent.appendChild(document.createTextNode(m[0]));  // refused: shown as the text it is
        }
      }
      last = pattern.lastIndex;
    }
    if (last < text.length) parent.appendChild(document.createTextNode(text.slice(last)));
  }

  function render(text) {
    const root = document.createDocumentFragment();
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    let i = 0;
    let para = [];
    const flush = () => {
      if (!para.length) return;
      const p = document.createElement("p");
      para.forEach((line, k) => {
        if (k) p.appendChild(document.createElement("br"));
        inline(p, line);
      });
      root.appendChild(p);
      para = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      const fence = /^\s*(```+|~~~+)\s*([\w+-]*)/.exec(line);
      if (fence) {
        flush();
        const pre = document.createElement("pre");
        const code = document.createElement("code");
        if (fence[2]) code.dataset.lang = fence[2];
        const body = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence[1])) body.push(lines[i++]);
        i++;  // the closing fence (or the end of a reply still streaming)
        code.textContent = body.join("\n");
        pre.appendChild(code);
        root.appendChild(pre);
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        flush();
        const h = document.createElement("h" + Math.min(6, heading[1].length + 2));
        inline(h, heading[2]);
        root.appendChild(h);
        i++;
        continue;
      }
      const item = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        const ordered = /\d/.test(item[1]);
        const list = document.createElement(ordered ? "ol" : "ul");
        while (i < lines.length) {
          const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
          if (!m || /\d/.test(m[1]) !== ordered) break;
          const li = document.createElement("li");
          inline(li, m[2]);
          list.appendChild(li);
          i++;
        }
        root.appendChild(list);
        continue;
      }
      if (/^\s*>/.test(line)) {
        flush();
        const quote = document.createElement("blockquote");
        const body = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ""));
        quote.appendChild(render(body.join("\n")));
        root.appendChild(quote);
        continue;
      }
      if (!line.trim()) {
        flush();
      } else {
        para.push(line);
      }
      i++;
    }
    flush();
    return root;
  }

  return { render, SAFE_LINK };
})();
