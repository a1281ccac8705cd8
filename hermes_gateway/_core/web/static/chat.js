/* The web chat: the feed (SSE) draws each reply message as it grows; Send, Stop, files, buttons, history. */
"use strict";
(() => {
  const log = document.getElementById("log");
  const form = document.getElementById("composer");
  const input = document.getElementById("text");
  const stopButton = document.getElementById("stop");
  const attachButton = document.getElementById("attach");
  const picker = document.getElementById("file");
  const recordButton = document.getElementById("record");
  const tray = document.getElementById("attached");
  const bubbles = new Map();  // message id -> its element
  let pending = [];  // files for the next message

  function scroll() { log.scrollTop = log.scrollHeight; }

  function bubble(role, id) {
    const node = Console.el("div", "msg " + role);
    if (id) { node.dataset.id = id; bubbles.set(id, node); }
    log.appendChild(node);
    return node;
  }

  function note(text, cls) {
    log.appendChild(Console.el("div", "note " + (cls || ""), text));
  }

  function drawText(node, text, final) {
    node.replaceChildren(Markdown.render(text));
    node.classList.remove("choice");
    node.classList.toggle("streaming", !final);
    node.dataset.final = final ? "1" : "0";
  }

  /* A question with buttons (a tool waiting for approval); a press posts the button's payload. */
  function drawChoice(node, e) {
    node.replaceChildren(Markdown.render(e.text));
    node.classList.add("choice");
    const row = Console.el("div", "buttons");
    for (const option of e.options || []) {
      const button = Console.el("button", "choice-" + (option.style || "default"), option.label);
      button.type = "button";
      button.addEventListener("click", async () => {
        row.querySelectorAll("button").forEach((b) => { b.disabled = true; });
        const r = await Console.post("/ui/api/chat/choose", { payload: option.payload });
        if (r.status >= 400) {
          row.querySelectorAll("button").forEach((b) => { b.disabled = false; });
          note(r.body && r.body.error ? r.body.error.message : "not sent (" + r.status + ")", "error");
        } else if (r.body && r.body.line) {
          note(r.body.line, "answer");
        }
        scroll();
      });
      row.appendChild(button);
    }
    node.appendChild(row);
  }

  function busy(on) {
    stopButton.hidden = !on;
    document.body.classList.toggle("busy", on);
  }

  function onEvent(event) {
    let e;
    try { e = JSON.parse(event.data); } catch (err) { return; }
    if (e.type === "text") {
      const node = bubbles.get(e.id) || bubble("bot", e.id);
      drawText(node, e.text, e.final);
    } else if (e.type === "choice") {
      drawChoice(bubbles.get(e.id) || bubble("bot", e.id), e);
    } else if (e.type === "note") {
      note(e.text, "tool");
    } else if (e.type === "media") {
      const node = bubble("bot media", e.id);
      if (e.kind === "image") {
        const img = document.createElement("img");
        img.src = e.url;  // a URL the server made; never model text
        img.alt = e.caption || e.filename || "image";
        node.appendChild(img);
      } else {
        const a = Console.el("a", "file", "📎 " + (e.filename || "file"));
        a.href = e.url;
        a.setAttribute("download", e.filename || "file");
        node.appendChild(a);
      }
      if (e.caption) node.appendChild(Console.el("div", "caption", e.caption));
    } else if (e.type === "busy") {
      busy(true);
    } else if (e.type === "idle") {
      busy(false);
    }
    scroll();
  }

  async function start() {
    const history = await Console.getJSON("/ui/api/chat/history");
    for (const m of history.messages) {
      if (m.role !== "user") { drawText(bubble("bot"), m.text, true); continue; }
      const mine = bubble("user");
      if (m.text) mine.appendChild(Console.el("div", "", m.text));
      for (const f of m.files || []) {
        if (f.url) {
          const img = document.createElement("img");
          img.src = f.url;  // a URL the server made for this chat's stored copy
          img.alt = f.name || "image";
          img.className = "thumb";
          mine.appendChild(img);
        } else {
          mine.appendChild(Console.el("div", "file", "📎 " + (f.name || f.label)));
        }
      }
    }
    busy(history.busy);
    scroll();
    const feed = new EventSource("/ui/api/chat/events");
    feed.onmessage = onEvent;
    /* Ready once the server has the feed open: a message sent before could be answered unseen. */
    feed.onopen = () => { document.body.dataset.ready = "1"; };
  }

  /* What a file looks like in the person's own message: a thumbnail for an image, else its name. */
  function fileView(file) {
    if (file.type.startsWith("image/") && !file.type.includes("svg")) {
      const img = document.createElement("img");
      img.src = URL.createObjectURL(file);  // a blob: URL of the person's own file
      img.alt = file.name;
      img.className = "thumb";
      return img;
    }
    return Console.el("div", "file", "📎 " + file.name);
  }

  function drawTray() {
    tray.replaceChildren();
    pending.forEach((file, i) => {
      const chip = Console.el("span", "chip", "📎 " + file.name + " ");
      const drop = Console.el("button", "quiet", "×");
      drop.type = "button";
      drop.title = "remove";
      drop.addEventListener("click", () => { pending.splice(i, 1); drawTray(); });
      chip.appendChild(drop);
      tray.appendChild(chip);
    });
    tray.hidden = pending.length === 0;
  }

  function addFiles(files) {
    for (const file of files) pending.push(file);
    drawTray();
  }

  async function send(voice) {
    const text = input.value.trim();
    const files = pending;
    if ((!text && !files.length && !voice) || document.body.dataset.ready !== "1") return;
    input.value = "";
    pending = [];
    drawTray();
    const mine = bubble("user");
    if (text) mine.appendChild(Console.el("div", "", text));
    for (const file of files) mine.appendChild(fileView(file));
    if (voice) mine.appendChild(Console.el("div", "file", "🎤 voice note"));
    scroll();
    let r;
    if (files.length || voice) {
      const body = new FormData();
      if (text) body.append("text", text);
      for (const file of files) body.append("file", file, file.name);
      if (voice) body.append("voice", voice, voice.name);
      r = await Console.postForm("/ui/api/chat/upload", body);
    } else {
      r = await Console.post("/ui/api/chat/send", { text });
    }
    if (r.status >= 400) {
      const why = r.body && r.body.error ? r.body.error.message : "not sent (" + r.status + ")";
      mine.appendChild(Console.el("div", "error", why));
    }
  }

  /* 🎤: record a voice note; pressed again, it is sent (with what the message box holds) as a "voice" file. */
  let recorder = null;
  async function record() {
    if (recorder) { recorder.stop(); return; }
    let stream;
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    } catch (err) {
      note("🎤 no microphone: " + (err.message || err.name), "error");
      scroll();
      return;
    }
    const chunks = [];
    recorder = new MediaRecorder(stream);
    recorder.ondataavailable = (e) => { if (e.data.size) chunks.push(e.data); };
    recorder.onstop = () => {
      stream.getTracks().forEach((track) => track.stop());
      recorder = null;
      recordButton.textContent = "🎤";
      recordButton.classList.remove("recording");
      const type = (chunks[0] && chunks[0].type) || "audio/webm";
      send(new File(chunks, "voice-note." + (type.includes("ogg") ? "ogg" : "webm"), { type }));
    };
    recorder.start();
    recordButton.textContent = "■ Send voice note";
    recordButton.classList.add("recording");
  }
  recordButton.hidden = !(navigator.mediaDevices && window.MediaRecorder);
  recordButton.addEventListener("click", record);

  form.addEventListener("submit", (event) => { event.preventDefault(); send(); });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); send(); }
  });
  stopButton.addEventListener("click", () => Console.post("/ui/api/chat/stop"));
  attachButton.addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => { addFiles(picker.files); picker.value = ""; });
  /* A file dropped on the page, or an image pasted into the message box, is attached too. */
  document.addEventListener("dragover", (event) => { event.preventDefault(); });
  document.addEventListener("drop", (event) => {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length) addFiles(event.dataTransfer.files);
  });
  input.addEventListener("paste", (event) => {
    const files = event.clipboardData ? [...event.clipboardData.files] : [];
    if (files.length) { event.preventDefault(); addFiles(files); }
  });
  start();
})();
