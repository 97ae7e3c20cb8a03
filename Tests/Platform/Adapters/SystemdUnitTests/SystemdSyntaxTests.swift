import Foundation
import SystemdUnit
import Testing

/// Quoting of ExecStart= words and rendering of units.
@Suite("SystemdSyntax and UserServiceUnit")
struct SystemdSyntaxTests {
    @Test(
        "each tricky argument is quoted as systemd.syntax(7) and systemd.service(5) require",
        arguments: [
            ("monitor", "monitor"),
            ("--data-dir=/a/b", "--data-dir=/a/b"),
            ("", "\"\""),
            ("Baby room", "\"Baby room\""),
            ("say \"hi\"", "\"say \\\"hi\\\"\""),
            ("it's", "\"it's\""),
            ("100%", "\"100%%\""),
            ("%n", "\"%%n\""),
            ("$HOME", "\"$$HOME\""),
            ("${HOME}", "\"$${HOME}\""),
            ("C:\\dir\\", "\"C:\\\\dir\\\\\""),
            (";", "\\;"),
            ("a;b", "\"a;b\""),
            ("line\nbreak", "\"line\\nbreak\""),
            ("tab\there", "\"tab\\there\""),
            ("esc\u{1B}[0m", "\"esc\\x1b[0m\""),
            ("Kinderzimmer-Ü", "Kinderzimmer-Ü"),
            ("bébé 👶", "\"bébé 👶\""),
        ])
    func quoting(argument: String, expected: String) {
        #expect(SystemdSyntax.quoted(argument) == expected)
    }

    @Test("the program path must be absolute, normalised, and free of '$' and control characters")
    func programPath() throws {
        #expect(
            try SystemdSyntax.commandLine(executable: "/opt/crib call/100%/cribcall", arguments: ["monitor"])
                == "\"/opt/crib call/100%%/cribcall\" monitor")
        for bad in [
            "cribcall", "./cribcall", "/opt//cribcall", "/opt/../cribcall", "/opt/$x/cribcall", "/opt/a\nb", "/opt/",
        ] {
            #expect(throws: SystemdUnitError.self, "\(bad)") {
                try SystemdSyntax.commandLine(executable: bad, arguments: [])
            }
        }
    }

    @Test("setting values escape specifiers and cannot break the line")
    func values() {
        #expect(SystemdSyntax.value("CribCall monitor \"100% Nursery\"") == "CribCall monitor \"100%% Nursery\"")
        #expect(SystemdSyntax.value(" a\nb\\") == "a b")
    }

    @Test("a unit: its command quoted, restart policy, user-manager hardening, values escaped")
    func unitText() throws {
        let unit = UserServiceUnit(
            name: "homeapps-test.service", description: "Test 100% \"A\"", executable: "/opt/home apps/serve",
            arguments: ["--name", "A B"], restartSeconds: 7, generator: "homeapps-test install %i")
        let text = try unit.rendered()
        #expect(text.hasPrefix("# Written by `homeapps-test install %%i`. Run it again (with --force) to change"))
        for line in [
            "Description=Test 100%% \"A\"", "Type=exec", "ExecStart=\"/opt/home apps/serve\" --name \"A B\"",
            "Restart=on-failure", "RestartSec=7", "SyslogIdentifier=homeapps-test", "NoNewPrivileges=yes",
            "UMask=0077", "WantedBy=default.target",
        ] {
            #expect(text.split(separator: "\n").contains(Substring(line)), "\(line) in \(text)")
        }
        #expect(throws: SystemdUnitError.self) {
            try UserServiceUnit(name: "x.service", description: "", executable: "x", arguments: [], generator: "")
                .rendered()
        }
    }
}
