import CribCallSystemd
import Foundation
import SystemdUnit
import TestSupport
import Testing

/// The two CribCall units (`cribcall install-service monitor|listener`): their text, and systemd's verdict.
@Suite("CribCallServiceUnit")
struct CribCallServiceUnitTests {
    @Test("the monitor unit: absolute data dir, passed-through options, restart policy, user-manager hardening")
    func monitorUnit() throws {
        let unit = try CribCallServiceUnit.unit(
            .monitor,
            .init(
                executable: "/usr/local/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/home/ana/crib data/"),
                name: "Nursery 2", audioSource: "test:cry", port: 48081))
        #expect(unit.name == "cribcall-monitor.service")
        #expect(
            try unit.rendered() == """
                # Written by `cribcall install-service monitor`. Run it again (with --force) to change the settings.
                [Unit]
                Description=CribCall monitor "Nursery 2"

                [Service]
                Type=exec
                ExecStart=/usr/local/bin/cribcall monitor --data-dir "/home/ana/crib data" --name "Nursery 2" \
                --audio-source test:cry --port 48081
                Restart=on-failure
                RestartSec=5
                SyslogIdentifier=cribcall-monitor
                # Hardening that works in the user manager without privileges.
                NoNewPrivileges=yes
                LockPersonality=yes
                RestrictSUIDSGID=yes
                UMask=0077

                [Install]
                WantedBy=default.target

                """)
    }

    @Test("the listener unit runs `cribcall listen` and refuses monitor-only settings")
    func listenerUnit() throws {
        let unit = try CribCallServiceUnit.unit(
            .listener,
            .init(
                executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/var/lib/x"), name: "Kitchen"))
        #expect(unit.name == "cribcall-listener.service")
        #expect(unit.arguments == ["listen", "--data-dir", "/var/lib/x", "--name", "Kitchen"])
        // A listener no monitor trusts exits 77: pairing again helps, restarting does not.
        #expect(try unit.rendered().contains("Restart=on-failure\nRestartSec=5\nRestartPreventExitStatus=77\n"))
        #expect(throws: SystemdUnitError.self) {
            try CribCallServiceUnit.unit(
                .listener,
                .init(
                    executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/x"), port: 1))
        }
    }

    @Test("with --web: the service serves the app, and a launcher opens it; the listener refuses monitor options")
    func webAndLauncher() throws {
        var settings = CribCallServiceUnit.Settings(
            executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/home/me/crib"), name: "Nursery")
        #expect(CribCallServiceUnit.launcher(.monitor, settings) == nil)
        settings.safety = true
        settings.videoSource = "v4l2"
        settings.web = 8480
        let unit = try CribCallServiceUnit.unit(.monitor, settings).rendered()
        #expect(unit.contains("--safety --video-source v4l2 --web 8480"))
        let launcher = try #require(CribCallServiceUnit.launcher(.monitor, settings))
        #expect(launcher.fileName == "cribcall-monitor.desktop" && launcher.name == "CribCall (Nursery)")
        #expect(try launcher.rendered().contains("Exec=/usr/bin/cribcall open --data-dir /home/me/crib\n"))
        #expect(throws: SystemdUnitError.self) { try CribCallServiceUnit.unit(.listener, settings) }
        var listener = CribCallServiceUnit.Settings(
            executable: "/usr/bin/cribcall", dataDirectory: URL(fileURLWithPath: "/home/me/crib"), name: "Mum")
        listener.web = 0
        #expect(try CribCallServiceUnit.unit(.listener, listener).rendered().contains("listen --data-dir"))
        #expect(try CribCallServiceUnit.unit(.listener, listener).rendered().contains("--web 0"))
        #expect(CribCallServiceUnit.launcher(.listener, listener)?.fileName == "cribcall-listener.desktop")
    }

    @Test("the running program's path is absolute and executable")
    func currentExecutable() {
        let path = UserServiceUnit.currentExecutable()
        #expect(path.hasPrefix("/"))
        #expect(FileManager.default.isExecutableFile(atPath: path))
    }

    @Test("systemd-analyze verify --user accepts both generated units with no warning")
    func verifyAccepts() async throws {
        guard let analyze = SystemdTools.analyze(for: "verifyAccepts") else { return }
        let sandbox = try SystemdSandbox()
        defer { sandbox.remove() }
        for role in CribCallServiceUnit.Role.allCases {
            let unit = try CribCallServiceUnit.unit(
                role,
                .init(
                    executable: sandbox.program, dataDirectory: URL(fileURLWithPath: "/tmp/crib data %h"),
                    name: "Ana's \"Baby\" room 100% $HOME ${X} C:\\dir ; bébé",
                    audioSource: role == .monitor ? "test:cry" : nil, port: role == .monitor ? 48081 : nil))
            try await sandbox.expectAccepted(try unit.rendered(), named: unit.name, by: analyze)
        }
    }
}
