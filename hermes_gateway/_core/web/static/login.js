"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("login");
  const error = document.getElementById("error");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const secret = document.getElementById("secret").value;
    const r = await fetch("/ui/login", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify({ secret }),
    });
    if (r.ok) { location.href = "/ui"; return; }
    let message = "sign-in failed";
    try { message = (await r.json()).error.message; } catch (e) { /* not JSON */ }
    error.textContent = message;
  });
});
