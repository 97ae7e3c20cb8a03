// Toukan review page: lists GET /memories. Every value is set with textContent or as an attribute of an element
// made here, never as HTML (transcripts and file names are untrusted text).
"use strict";

const list = document.getElementById("memories");
const status = document.getElementById("status");
const template = document.getElementById("memory-template");
const players = new Map();

function formatDuration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  return minutes > 0 ? `${minutes}m ${whole % 60}s` : `${(Math.round(seconds * 10) / 10).toFixed(1)} s`;
}

function render(memory) {
  const item = template.content.firstElementChild.cloneNode(true);
  item.dataset.id = memory.memory_id;
  item.querySelector(".name").textContent = memory.file_name;
  const badge = item.querySelector(".badge");
  badge.textContent = memory.status;
  badge.classList.add(`status-${memory.status === "ready" || memory.status === "failed" ? memory.status : "processing"}`);
  const facts = [new Date(memory.created_at).toLocaleString()];
  if (memory.duration !== null) facts.push(formatDuration(memory.duration));
  if (memory.loudness !== null) facts.push(`${memory.loudness.toFixed(1)} LUFS`);
  facts.push(`${Math.round(memory.size / 1024)} KiB`);
  item.querySelector(".facts").textContent = facts.join(" · ");
  // Keep a player that exists (it may be playing) instead of replacing it.
  const audio = players.get(memory.memory_id) || item.querySelector("audio");
  audio.src = `/memories/${encodeURIComponent(memory.memory_id)}/audio`;
  players.set(memory.memory_id, audio);
  item.querySelector("audio").replaceWith(audio);
  const transcript = item.querySelector(".transcript");
  if (memory.status === "ready") {
    transcript.textContent = memory.transcript ? memory.transcript : "(no words recognised)";
  } else {
    transcript.textContent = memory.status === "processing" ? "Processing…" : "";
  }
  item.querySelector(".error").textContent = memory.error || "";
  return item;
}

async function refresh() {
  try {
    const response = await fetch("/memories", { cache: "no-store" });
    if (!response.ok) throw new Error(`GET /memories answered ${response.status}`);
    const memories = await response.json();
    list.replaceChildren(...memories.map(render));
    status.textContent = memories.length === 0 ? "No memories yet." : `${memories.length} memories`;
    const busy = memories.some((m) => m.status === "processing");
    setTimeout(refresh, busy ? 2000 : 10000);
  } catch (error) {
    status.textContent = `Cannot load the memories: ${error.message}`;
    setTimeout(refresh, 5000);
  }
}

refresh();
