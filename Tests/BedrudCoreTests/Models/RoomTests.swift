import BedrudCore
import BedrudProtocol
import Foundation
import Testing

/// Bedrud v0.12.0's room and auth answers as the models read them: settings kept whole
/// (unknown keys included) for the whole-object replace, `archived_owned`, the
/// verification answer to register, and `/auth/settings`' new keys.
@Suite struct RoomTests {
    @Test func settingsSurviveARoundTripWithKeysTheBotDoesNotKnow() throws {
        let json = #"{"allowChat":false,"allowVideo":true,"allowAudio":true,"requireApproval":true,"e2ee":false,"isPersistent":true,"recordingsAllowed":true,"lobbyMessage":"hi","maxStage":4,"nested":{"a":[1,2.5,null]}}"#
        var s = try JSONDecoder().decode(RoomSettings.self, from: Data(json.utf8))
        #expect(s.allowChat == false && s.requireApproval && s.isPersistent && s.recordingsAllowed == true)
        #expect(s.otherKeys["lobbyMessage"] == .string("hi"))
        s.recordingsAllowed = false
        let back = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(s))
        let expected = try JSONDecoder().decode(JSONValue.self, from: Data(json.replacingOccurrences(of: #""recordingsAllowed":true"#, with: #""recordingsAllowed":false"#).utf8))
        #expect(back == expected)
        // Whole numbers go back without a fraction.
        #expect(String(decoding: try JSONEncoder().encode(JSONValue.number(4)), as: UTF8.self) == "4")
    }

    @Test func settingsFromAnOlderServerLackRecordingsAllowed() throws {
        let s = try JSONDecoder().decode(RoomSettings.self, from: Data(#"{"allowChat":true}"#.utf8))
        #expect(s.recordingsAllowed == nil && s.allowVideo && !s.e2ee)
        let out = try JSONDecoder().decode([String: JSONValue].self, from: JSONEncoder().encode(s))
        #expect(out["recordingsAllowed"] == nil, "not invented")
        #expect(out.keys.sorted() == ["allowAudio", "allowChat", "allowVideo", "e2ee", "isPersistent", "requireApproval"])
    }

    @Test func joinAnswersAnEndedMeetingToItsCreator() throws {
        let archived = #"{"status":"archived_owned","name":"standup","mode":"standard","settings":{"allowChat":true,"recordingsAllowed":false,"extra":1}}"#
        guard case .archivedOwned(let a) = try JSONDecoder().decode(JoinAnswer.self, from: Data(archived.utf8)) else {
            Issue.record("archived_owned must decode as its own case")
            return
        }
        #expect(a.name == "standup" && a.mode == "standard" && a.settings?.recordingsAllowed == false && a.settings?.otherKeys["extra"] == .number(1))
        let active = #"{"id":"r1","name":"standup","token":"t","livekitHost":"http://x/livekit","activeRecordingId":""}"#
        guard case .joined(let j) = try JSONDecoder().decode(JoinAnswer.self, from: Data(active.utf8)) else {
            Issue.record("an active room must decode as joined")
            return
        }
        #expect(j.token == "t" && j.room.id == "r1")
        // Neither shape: still a decoding error (a bad answer), not a silent success.
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(JoinAnswer.self, from: Data(#"{"status":"other"}"#.utf8)) }
    }

    @Test func registerMayAskForVerificationInsteadOfASession() throws {
        let verify = #"{"requiresVerification":true,"message":"Please check your email to verify your account","email":"bot@example.com"}"#
        guard case .verificationRequired(let email) = try JSONDecoder().decode(RegisterAnswer.self, from: Data(verify.utf8)) else {
            Issue.record("verification answer must decode as its own case")
            return
        }
        #expect(email == "bot@example.com")
        let session = #"{"user":{"id":"u","email":"e","name":"n","provider":"local","accesses":["user"]},"tokens":{"accessToken":"a","refreshToken":"b"}}"#
        guard case .session(let s) = try JSONDecoder().decode(RegisterAnswer.self, from: Data(session.utf8)) else {
            Issue.record("a session must decode as one")
            return
        }
        #expect(s.tokens.refreshToken == "b")
    }

    @Test func authSettingsReadTheNewKeys() throws {
        let json = #"{"registrationEnabled":true,"guestLoginEnabled":false,"requireEmailVerification":true,"recordingsEnabled":false}"#
        let s = try JSONDecoder().decode(AuthSettings.self, from: Data(json.utf8))
        #expect(s.guestLoginEnabled == false && s.requireEmailVerification == true && s.recordingsEnabled == false)
    }

    @Test func accountProblemsSayWhatToDo() {
        #expect(AccountProblem(.emailNotVerified(justRegistered: true), email: "bot@example.com", server: "https://m.example").description
            == "The account bot@example.com was registered on https://m.example, but the server requires a verified email address before it issues a session: open the link Bedrud sent to that address, then run 'bedrud-bot login'.")
        #expect(AccountProblem(.deactivated, email: nil, server: "https://m.example").description
            == "The bot's account on https://m.example has been deactivated by an administrator: it cannot sign in until it is reactivated.")
    }
}
