// CribAlert web app: the Settings tab and its pages (seed 003 §8): alert preferences, privacy and transparency,
// the baby profile, help and support, the optional account — and the seed's test triggers (§6.3).
"use strict";

// ---------------------------------------------------------------------------------------------------------------
// Settings

/** "Monitoring active · Camera connected · Alerts on", from the state. */
function settingsLine(state) {
    const monitoring = monitoringOf(state);
    const parts = [{
        active: "Monitoring active",
        paused: "Monitoring paused",
        stale: "Monitoring cannot judge right now",
        off: "Safety detection off",
        switched_off: "Monitoring is off",
    }[monitoring]];
    if (monitoring !== "off" && monitoring !== "switched_off") parts.push(monitoring === "paused" ? "Camera not connected" : "Camera connected");
    parts.push(state.settings && state.settings.safetyAlerts === false ? "Alerts off" : "Alerts on");
    return parts.join(" · ");
}

defineScreen("settings", {
    path: "/settings",
    role: "monitor",
    tab: "settings",
    title: "Settings",

    enter() {
        $("#trigger-error").hidden = true;
    },

    update(state) {
        setText($("#settings-line"), Live.connected ? settingsLine(state) : "Reconnecting to the monitor…");
        setText($("#settings-version"), `CribCall version ${state.version || "unknown"}`);
    },

    actions: {
        async trigger(button) {
            button.disabled = true;
            const error = $("#trigger-error");
            await attempt(async () => {
                const alert = await api("api/trigger", { method: "POST", body: { kind: button.dataset.kind } });
                Alerts.receive(alert); // at once, without waiting for the next state event
            }, error);
            button.disabled = false;
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Alert Preferences: sound, volume, silent mode, vibration — all saved with POST api/app

defineScreen("alert-prefs", {
    path: "/settings/alerts",
    role: null, // both roles
    title: "Alert Preferences",
    volumeTimer: null, // the slider's value is saved once it rests (arrow keys fire a change per step)
    volumeSaving: false, // until then, and while it has focus, state updates do not move it back

    init(el) {
        for (const radio of $$('input[name="alertSound"]', el)) {
            radio.addEventListener("change", () => this.save({ alertSound: radio.value },
                `Alert sound: ${radio.labels[0].textContent.trim()}.`));
        }
        for (const radio of $$('input[name="vibration"]', el)) {
            radio.addEventListener("change", () => {
                Sounds.vibrate(radio.value);
                this.save({ vibration: radio.value }, `Vibration: ${radio.labels[0].textContent.trim()}.`);
            });
        }
        const volume = $("#volume");
        volume.addEventListener("input", () => {
            this.volumeSaving = true;
            setText($("#volume-value"), `${volume.value}%`);
        });
        volume.addEventListener("change", () => {
            this.volumeSaving = true;
            clearTimeout(this.volumeTimer);
            this.volumeTimer = setTimeout(async () => {
                await this.save({ volume: Number(volume.value) }, `Volume ${volume.value}%.`);
                this.volumeSaving = false;
            }, 300);
        });
        const dark = $("#dark-screen");
        dark.addEventListener("change", () => {
            Theme.choose(dark.checked);
            announce(`Dark screen ${dark.checked ? "on" : "off"}.`);
        });
        const notifications = $("#notifications-on");
        notifications.addEventListener("change", async () => {
            if (notifications.checked && "Notification" in window && Notification.permission === "default") {
                await Notification.requestPermission().catch(() => {});
            }
            this.save({ notifications: notifications.checked },
                `Notifications ${notifications.checked ? "on" : "off"}.`);
        });
        const override = $("#override-silent");
        override.addEventListener("change", () => this.save({ overrideSilentMode: override.checked },
            `Override Silent Mode ${override.checked ? "on" : "off"}.`));
        setText($("#vib-support"), Sounds.canVibrate() ? ""
            : "This device cannot vibrate; the pattern is used on devices that can.");
        $("#vib-support").hidden = Sounds.canVibrate();
        // The monitor's detection settings (FR7): each change is saved at once, and the monitor uses it at once.
        const threshold = $("#sound-threshold");
        threshold.addEventListener("input", () => {
            this.thresholdSaving = true;
            setText($("#sound-threshold-value"), threshold.value);
        });
        threshold.addEventListener("change", () => {
            // arrow keys change it step by step: only the level it stops at is saved (in order, never an older one),
            // and the state's older value does not overwrite it meanwhile
            this.thresholdSaving = true;
            clearTimeout(this.thresholdTimer);
            this.thresholdTimer = setTimeout(async () => {
                await this.saveDetection({ threshold: Number(threshold.value) }, `Sound alert level ${threshold.value}.`);
                this.thresholdSaving = false;
            }, 300);
        });
        for (const select of $$("select[data-detection]", el)) {
            select.addEventListener("change", () => {
                const key = select.dataset.detection;
                const value = key === "crySensitivity" || key === "autoStream" ? select.value : Number(select.value);
                this.saveDetection({ [key]: value },
                    `${select.labels[0].textContent.trim()}: ${select.selectedOptions[0].textContent.trim()}.`);
            });
        }
    },

    async saveDetection(partial, words) {
        if (await attempt(() => saveSettings(partial), $("#detection-error"))) announce(`${words} Saved.`);
    },

    /** A select shows the stored value, adding it as an option when it is not one of the choices. */
    choose(select, value) {
        const text = String(value);
        if (![...select.options].some((o) => o.value === text)) {
            select.append(h("option", { value: text, text }));
        }
        select.value = text;
    },

    update(state) {
        const app = state.app || {};
        for (const radio of $$('input[name="alertSound"]')) radio.checked = radio.value === app.alertSound;
        for (const radio of $$('input[name="vibration"]')) radio.checked = radio.value === app.vibration;
        if (!this.volumeSaving && document.activeElement !== $("#volume")) {
            const v = Number.isFinite(Number(app.volume)) ? Number(app.volume) : 75;
            $("#volume").value = String(v);
            setText($("#volume-value"), `${v}%`);
        }
        $("#override-silent").checked = app.overrideSilentMode !== false;
        $("#notifications-on").checked = app.notifications !== false;
        const blocked = "Notification" in window && Notification.permission === "denied";
        setText($("#notifications-blocked"), blocked ? "This browser blocks notifications from this page: allow "
            + "them in its site settings, or keep the page in front." : "");
        $("#notifications-blocked").hidden = !blocked || app.notifications === false;
        $("#dark-screen").checked = Theme.chosen;
        const settings = state.settings;
        if (state.role !== "monitor" || !settings) return;
        const threshold = $("#sound-threshold");
        if (!this.thresholdSaving && document.activeElement !== threshold) {
            threshold.value = String(settings.threshold);
            setText($("#sound-threshold-value"), String(settings.threshold));
        }
        for (const select of $$("select[data-detection]")) {
            const value = settings[select.dataset.detection];
            if (value !== undefined && document.activeElement !== select) this.choose(select, value);
        }
    },

    async save(partial, words) {
        if (await attempt(() => saveApp(partial))) announce(`${words} Saved.`);
    },

    actions: {
        async play(button) {
            const name = button.dataset.sound;
            const played = await Sounds.play(name, Number($("#volume").value));
            if (!played) {
                const words = "The browser did not play the sound. Check that sound is allowed for this page.";
                announce(words, { bad: true });
            }
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Privacy and Transparency, and the Privacy Policy

defineScreen("privacy", {
    path: "/settings/privacy",
    role: null, // both roles
    title: "Privacy and Transparency",
    actions: {
        protect: (button) => toggleDisclosure(button),
    },
});

defineScreen("policy", {
    path: "/settings/privacy/policy",
    role: null, // both roles
    title: "Privacy Policy",
});

// ---------------------------------------------------------------------------------------------------------------
// Baby Profile. The photo is optional and stays in this browser (localStorage, as a small JPEG data URL): it is
// never sent to the monitor.

const PHOTO_KEY = "cribalert.babyPhoto";
const PHOTO_SIDE = 192;

const Photo = {
    load() {
        try {
            return localStorage.getItem(PHOTO_KEY);
        } catch (_) {
            return null;
        }
    },
    store(dataUrl) {
        try {
            if (dataUrl) localStorage.setItem(PHOTO_KEY, dataUrl);
            else localStorage.removeItem(PHOTO_KEY);
            return true;
        } catch (_) {
            return false;
        }
    },
    /** A square, centre-cropped JPEG of `source` (an image or bitmap), as a data URL. */
    square(source, width, height) {
        const canvas = document.createElement("canvas");
        canvas.width = canvas.height = PHOTO_SIDE;
        const side = Math.min(width, height);
        canvas.getContext("2d").drawImage(source, (width - side) / 2, (height - side) / 2, side, side,
            0, 0, PHOTO_SIDE, PHOTO_SIDE);
        return canvas.toDataURL("image/jpeg", 0.85);
    },
};

defineScreen("profile", {
    path: "/settings/profile",
    role: "monitor",
    title: "Baby Profile",

    init() {
        $("#profile-name").addEventListener("input", () => this.sync());
        $("#profile-form").addEventListener("submit", (event) => {
            event.preventDefault();
            this.submit();
        });
        $("#profile-photo-input").addEventListener("change", (event) => this.pick(event.target));
    },

    enter(_el, state) {
        const app = (state && state.app) || {};
        $("#profile-name").value = app.babyName || "";
        $("#profile-location").value = app.sleepLocation || "";
        $("#profile-error").hidden = true;
        this.sync();
        this.drawPhoto();
    },

    /** Save is disabled while the (required) name is blank. */
    sync() {
        const blank = $("#profile-name").value.trim() === "";
        $("#profile-save").disabled = blank;
        if (!blank) $("#profile-name").removeAttribute("aria-invalid");
    },

    async submit() {
        const name = $("#profile-name").value.trim();
        const error = $("#profile-error");
        if (name === "") {
            $("#profile-name").setAttribute("aria-invalid", "true");
            error.textContent = "Please enter your baby's name.";
            error.hidden = false;
            $("#profile-name").focus();
            return;
        }
        const sleepLocation = $("#profile-location").value.trim();
        if (await attempt(() => saveApp({ babyName: name, sleepLocation }), error)) announce("Profile saved.");
    },

    drawPhoto() {
        const canvas = $("#profile-photo");
        const ctx = canvas.getContext("2d");
        const dataUrl = Photo.load();
        const name = babyName(Live.state);
        const show = (has) => {
            canvas.classList.toggle("has-photo", has);
            canvas.setAttribute("aria-label", has ? `Photo of ${name}` : "No photo yet");
            $("#profile-photo-empty").hidden = has;
            $("#profile-photo-remove").hidden = !has;
            setText($("#profile-photo-add"), has ? "Change photo" : "Add photo");
        };
        ctx.clearRect(0, 0, canvas.width, canvas.height);
        if (!dataUrl) return show(false);
        const img = new Image();
        img.onload = () => {
            ctx.save();
            ctx.beginPath();
            ctx.arc(PHOTO_SIDE / 2, PHOTO_SIDE / 2, PHOTO_SIDE / 2, 0, Math.PI * 2);
            ctx.clip();
            ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
            ctx.restore();
            show(true);
        };
        img.onerror = () => show(false);
        img.src = dataUrl;
        return undefined;
    },

    async pick(input) {
        const file = input.files && input.files[0];
        input.value = "";
        if (!file) return;
        try {
            const bitmap = await createImageBitmap(file);
            const stored = Photo.store(Photo.square(bitmap, bitmap.width, bitmap.height));
            bitmap.close();
            if (stored) announce("Photo added. It stays in this browser only.");
            else announce("The photo could not be kept in this browser.", { bad: true });
        } catch (_) {
            announce("That file could not be read as a picture.", { bad: true });
        }
        this.drawPhoto();
    },

    actions: {
        photo: () => $("#profile-photo-input").click(),
        "photo-remove"() {
            Photo.store(null);
            this.drawPhoto();
            announce("Photo removed.");
            $("#profile-photo-add").focus();
        },
    },
});

// ---------------------------------------------------------------------------------------------------------------
// Help and Support, Account (optional)

defineScreen("help", {
    path: "/settings/help",
    role: null, // both roles
    title: "Help and Support",
    actions: {
        answer: (button) => toggleDisclosure(button),
    },
});

defineScreen("account", {
    path: "/settings/account",
    role: "monitor",
    title: "Account",
    enter() {
        $("#account-note").hidden = true;
    },
    actions: {
        "no-accounts"() {
            const note = $("#account-note");
            note.hidden = false;
            announce(note.textContent.trim().replace(/\s+/g, " "), { quiet: true });
        },
    },
});
