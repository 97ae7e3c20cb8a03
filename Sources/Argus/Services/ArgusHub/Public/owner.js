// The owner's page of argus-hub: pairing codes, the paired devices (revoke), the CribCall monitors (forget).
// Served on loopback behind the per-run secret in its address; every request is relative to it.
"use strict";

const $ = (id) => document.getElementById(id);
let expiresAt = null;
let codeMadeAt = null;

async function call(path, body) {
  const options = body === undefined
    ? { cache: "no-store" }
    : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const response = await fetch(path, options);
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.detail || `the hub answered ${response.status}`);
  return answer;
}

function grouped(hex) {
  return (hex.match(/.{1,4}/g) || []).join(" ");
}

function showProblem(error) {
  $("problem").textContent = error ? `${error.message}` : "";
  $("problem").hidden = !error;
}

function row(name, detail, buttonLabel, onClick) {
  const item = document.createElement("li");
  const words = document.createElement("div");
  const title = document.createElement("div");
  title.className = "name";
  title.textContent = name;
  const line = document.createElement("div");
  line.className = "detail";
  line.textContent = detail;
  words.append(title, line);
  item.append(words);
  if (buttonLabel) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.textContent = buttonLabel.text;
    button.setAttribute("aria-label", buttonLabel.name);
    button.addEventListener("click", onClick);
    item.append(button);
  }
  return item;
}

function render(state) {
  $("fingerprint").textContent = grouped(state.cert_fingerprint);
  const devices = state.devices.map((device) => {
    const when = new Date(device.paired_at).toLocaleString();
    const status = device.active ? `paired ${when}` : "revoked";
    const detail = `${device.device_type} · ${status}${device.push ? " · notifications on" : ""}`;
    const revoke = device.active ? { text: "Revoke", name: `Revoke ${device.device_name}` } : null;
    return row(device.device_name, detail, revoke, () => revokeDevice(device));
  });
  $("devices").replaceChildren(...devices);
  // The live code has been used: say by which device (the same machine's clock, seconds apart at most).
  const newcomer = codeMadeAt === null ? null
    : state.devices.find((device) => device.active && Date.parse(device.paired_at) >= codeMadeAt - 2000);
  if (newcomer && expiresAt !== null) {
    expiresAt = null;
    $("code-digits").textContent = "";
    $("code-expiry").textContent = `${newcomer.device_name} is paired.`;
  }
  $("no-devices").hidden = devices.length > 0;
  const monitors = state.monitors.map((monitor) =>
    row(monitor.name, monitor.online ? "connected" : "not connected", { text: "Forget", name: `Forget ${monitor.name}` },
      () => forgetMonitor(monitor)));
  $("monitors").replaceChildren(...monitors);
  $("no-monitors").hidden = monitors.length > 0 || !state.watches_monitors;
}

async function refresh() {
  try {
    render(await call("api/state"));
    showProblem(null);
  } catch (error) {
    showProblem(error);
  }
}

async function newCode() {
  try {
    const answer = await call("api/pairing-code", {});
    $("code-digits").textContent = `${answer.pairing_code.slice(0, 3)} ${answer.pairing_code.slice(3)}`;
    expiresAt = Date.parse(answer.expires_at);
    codeMadeAt = Date.now();
    $("code").hidden = false;
    tick();
    showProblem(null);
  } catch (error) {
    showProblem(error);
  }
}

function tick() {
  if (expiresAt === null) return;
  const left = Math.round((expiresAt - Date.now()) / 1000);
  if (left <= 0) {
    $("code-digits").textContent = "";
    $("code-expiry").textContent = "That code has expired. Make a new one.";
    expiresAt = null;
    return;
  }
  $("code-expiry").textContent = `Works once, for ${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")} more.`;
}

async function revokeDevice(device) {
  if (!confirm(`Revoke ${device.device_name}? Its app is signed out at once.`)) return;
  try {
    await call("api/devices/revoke", { device_id: device.device_id });
    await refresh();
  } catch (error) {
    showProblem(error);
  }
}

async function forgetMonitor(monitor) {
  if (!confirm(`Forget ${monitor.name}? The hub stops watching it.`)) return;
  try {
    await call("api/monitors/forget", { monitor_id: monitor.monitor_id });
    await refresh();
  } catch (error) {
    showProblem(error);
  }
}

// Every 5 s; every second while a code is live, so a phone that just paired shows up at once.
let sinceRefresh = 0;
setInterval(() => {
  tick();
  sinceRefresh += 1;
  if (expiresAt !== null || sinceRefresh >= 5) {
    sinceRefresh = 0;
    refresh();
  }
}, 1000);
$("new-code").addEventListener("click", newCode);
refresh();
