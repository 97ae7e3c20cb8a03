// Toukan review page: lists GET /memories, newest first, a page at a time. Every value is set with textContent or
// as an attribute of an element made here, never as HTML (transcripts and file names are untrusted text).
//
// A refresh updates the items already on the page in place: an item's player is made once, with its source set
// once, and is never replaced or moved while the list changes around it, so listening and seeking go on across
// refreshes.
"use strict";

const list = document.getElementById("memories");
const status = document.getElementById("status");
const template = document.getElementById("memory-template");
const older = document.getElementById("older");
const pageSize = 50;
const items = new Map();
let wanted = pageSize;
let timer = null;

function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m ${whole % 60}s` : `${(Math.round(seconds * 10) / 10).toFixed(1)} s`;
}

function itemFor(memory) {
  let item = items.get(memory.memory_id);
  if (!item) {
    item = template.content.firstElementChild.cloneNode(true);
    item.dataset.id = memory.memory_id;
    item.querySelector("audio").src = `/memories/${encodeURIComponent(memory.memory_id)}/audio`;
    items.set(memory.memory_id, item);
  }
  return item;
}

function setText(element, text) {
  if (element.textContent !== text) element.textContent = text;
}

function update(item, memory) {
  setText(item.querySelector(".name"), memory.file_name);
  const badge = item.querySelector(".badge");
  setText(badge, memory.status);
  const kind = memory.status === "ready" || memory.status === "failed" ? memory.status : "processing";
  badge.className = `badge status-${kind}`;
  const facts = [new Date(memory.created_at).toLocaleString()];
  if (memory.duration !== null) facts.push(formatDuration(memory.duration));
  if (memory.loudness !== null) facts.push(`${memory.loudness.toFixed(1)} LUFS`);
  facts.push(`${Math.round(memory.size / 1024)} KiB`);
  setText(item.querySelector(".facts"), facts.join(" · "));
  let transcript = "";
  if (memory.status === "ready") transcript = memory.transcript ? memory.transcript : "(no words recognised)";
  else if (memory.status === "processing") transcript = "Processing…";
  setText(item.querySelector(".transcript"), transcript);
  setText(item.querySelector(".error"), memory.error || "");
}

// The next page's address from a Link header (`</memories?…>; rel="next"`), or null.
function nextPage(response) {
  const link = response.headers.get("Link") || "";
  const match = link.match(/<([^>]+)>\s*;\s*rel="next"/);
  return match ? match[1] : null;
}

// The newest `count` memories, following the pages; and whether older ones exist.
async function fetchMemories(count) {
  let url = `/memories?limit=${Math.min(count, 500)}`;
  const memories = [];
  let more = false;
  while (url) {
    const response = await fetch(url, { cache: "no-store" });
    if (!response.ok) throw new Error(`GET /memories answered ${response.status}`);
    memories.push(...(await response.json()));
    url = nextPage(response);
    if (memories.length >= count) {
      more = url !== null || memories.length > count;
      break;
    }
  }
  return { memories: memories.slice(0, count), more };
}

// Puts the items in the memories' order, moving only those out of place (a new memory goes in above the others).
function arrange(memories) {
  const shown = new Set(memories.map((m) => m.memory_id));
  for (const [id, item] of items) {
    if (!shown.has(id)) {
      item.remove();
      items.delete(id);
    }
  }
  memories.forEach((memory, index) => {
    const item = itemFor(memory);
    update(item, memory);
    if (list.children[index] !== item) list.insertBefore(item, list.children[index] || null);
  });
}

async function refresh() {
  clearTimeout(timer);
  try {
    const { memories, more } = await fetchMemories(wanted);
    arrange(memories);
    status.textContent = memories.length === 0 ? "No memories yet." : `${memories.length} memories${more ? ", and older ones" : ""}`;
    older.hidden = !more;
    const busy = memories.some((m) => m.status === "processing");
    timer = setTimeout(refresh, busy ? 2000 : 10000);
  } catch (error) {
    status.textContent = `Cannot load the memories: ${error.message}`;
    timer = setTimeout(refresh, 5000);
  }
}

older.addEventListener("click", () => {
  wanted += pageSize;
  refresh();
});

refresh();
