//! The one flags → policy rule: how a client's answering flags (`--decline`, `--answers` with
//! `--submit`, `--non-interactive`, `hook --fallback`, `--timeout`) and why nobody can answer
//! here (no display, no window) become the book's [`Policy`] for one request's questions. Every
//! mode that takes these flags states them as [`Flags`] and asks this rule: `ask`, `hook`, `mcp`
//! and `opencode` (through `transport::admit`, in their own process or in the inbox), and the
//! hosts `askpane claude` and `askpane codex` (their readers' autopilot); so a flag means the
//! same with and without an inbox.
//!
//! The rule is strict: an `--answers` file that does not fit the questions (a key or label that
//! matches nothing, a file that could not be read) is never dropped nor applied in part. The
//! policy then answers at once that no answer is available, naming what did not fit, and the
//! ruling carries the problem too (`ask` exits 2 naming it).

use crate::protocol::inbox::Policy as Flags;
use crate::protocol::{Ask, build_answers, drafts_from_preset};

use super::Policy;

/// What the agent reads as the reason when `--non-interactive` (or its variable) is set.
pub const NON_INTERACTIVE: &str =
    "askpane runs non-interactively (--non-interactive or ASKPANE_NONINTERACTIVE)";

/// The flags as the book's policy for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Ruling {
    pub policy: Policy,
    /// The flags do not fit these questions: what did not fit, naming the `--answers` file.
    /// The policy then decides "no answer is available" with these words.
    pub misfit: Option<String>,
}

/// States `flags` as the policy for `ask`. `nobody` is why no person can answer here (no
/// display, a host without a window), in the words the agent reads; `None` when someone can.
///
/// In order: `hook --fallback` decides alone; then `--decline`; then `--answers` must fit the
/// questions (with `--submit`, fit them as an answer), or the ruling is a misfit; then
/// `--non-interactive`, or `nobody`, answers that no human is available. `--timeout` and
/// `mark_skipped` pass through.
pub fn from_flags(ask: &Ask, flags: &Flags, nobody: Option<&str>) -> Ruling {
    let mut policy = Policy {
        timeout_secs: flags.timeout_secs,
        mark_skipped: flags.mark_skipped,
        ..Policy::default()
    };
    // `hook --fallback`: nobody is asked here, whatever else the flags say.
    if let Some(reason) = &flags.unavailable {
        policy.unavailable = Some(reason.clone());
        return Ruling { policy, misfit: None };
    }
    if let Some(message) = &flags.decline {
        policy.decline = Some(message.clone());
        return Ruling { policy, misfit: None };
    }
    if let Some(preset) = &flags.answers {
        let fitted = preset.content().and_then(|json| {
            let misfit =
                |error: &dyn std::fmt::Display| format!("--answers {}: {error}", preset.file);
            let drafts = drafts_from_preset(ask, json).map_err(|error| misfit(&error))?;
            if flags.submit {
                build_answers(ask, &drafts).map_err(|error| misfit(&error))?;
            }
            Ok(drafts)
        });
        match fitted {
            Ok(drafts) => {
                policy.preset = drafts;
                policy.submit = flags.submit;
            }
            Err(problem) => {
                // Never a partial answer, nor the user answering something the flags meant
                // to answer: the agent hears no answer is available, and why.
                let policy = Policy { unavailable: Some(problem.clone()), ..policy };
                return Ruling { policy, misfit: Some(problem) };
            }
        }
    }
    if flags.non_interactive {
        policy.unavailable = Some(NON_INTERACTIVE.to_owned());
    } else if let Some(reason) = nobody {
        policy.unavailable = Some(reason.to_owned());
    }
    Ruling { policy, misfit: None }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::inbox::Preset;
    use crate::protocol::{Outcome, validate};

    fn colour() -> Ask {
        validate(&json!({"questions": [{"question": "Which colour?", "header": "Colour",
            "options": [{"label": "Red", "description": ""}, {"label": "Blue", "description": ""}]}]}))
        .expect("valid")
        .ask
    }

    fn answers(json: serde_json::Value) -> Option<Preset> {
        Some(Preset { file: "a.json".into(), json: Some(json), unreadable: None })
    }

    fn decided(flags: &Flags, nobody: Option<&str>) -> Option<Outcome> {
        let ask = colour();
        from_flags(&ask, flags, nobody).policy.decide(&ask)
    }

    #[test]
    fn answers_that_fit_fill_the_form_or_with_submit_answer() {
        let ask = colour();
        let flags = Flags { answers: answers(json!({"Colour": "Blue"})), ..Flags::default() };
        let ruling = from_flags(&ask, &flags, None);
        assert_eq!(ruling.misfit, None);
        assert_eq!(ruling.policy.preset.len(), 1);
        assert_eq!(ruling.policy.decide(&ask), None, "the user confirms them");
        let submit = Flags { submit: true, ..flags };
        assert!(matches!(decided(&submit, None), Some(Outcome::Answered(_))));
    }

    #[test]
    fn answers_that_do_not_fit_are_unavailable_naming_the_file_with_or_without_submit() {
        for submit in [false, true] {
            for nobody in [None, Some("no display: none")] {
                let flags = Flags {
                    answers: answers(json!({"Shape": "Round"})),
                    submit,
                    ..Flags::default()
                };
                let ruling = from_flags(&colour(), &flags, nobody);
                let problem = ruling.misfit.clone().expect("a misfit");
                assert!(problem.starts_with("--answers a.json: "), "{problem}");
                assert_eq!(
                    ruling.policy.decide(&colour()),
                    Some(Outcome::Unavailable { reason: problem }),
                    "submit {submit}, nobody {nobody:?}"
                );
            }
        }
    }

    #[test]
    fn an_unreadable_answers_file_is_a_misfit() {
        let flags = Flags {
            answers: Some(Preset {
                file: "gone.json".into(),
                json: None,
                unreadable: Some("gone".into()),
            }),
            ..Flags::default()
        };
        let ruling = from_flags(&colour(), &flags, None);
        assert_eq!(ruling.misfit.as_deref(), Some("--answers: gone"));
        assert!(matches!(ruling.policy.decide(&colour()), Some(Outcome::Unavailable { .. })));
    }

    #[test]
    fn fallback_then_decline_come_before_the_answers() {
        let wrong = answers(json!({"Shape": "Round"}));
        let fallback = Flags {
            unavailable: Some("hook fallback".into()),
            decline: Some("no".into()),
            answers: wrong.clone(),
            ..Flags::default()
        };
        assert_eq!(
            decided(&fallback, None),
            Some(Outcome::Unavailable { reason: "hook fallback".into() })
        );
        let decline = Flags { decline: Some("not now".into()), answers: wrong, ..Flags::default() };
        assert_eq!(decided(&decline, Some("no display")), Some(Outcome::declined("not now")));
    }

    #[test]
    fn nobody_and_non_interactive_answer_unavailable_and_a_timeout_passes_through() {
        let plain = Flags { timeout_secs: Some(30), mark_skipped: true, ..Flags::default() };
        let ruling = from_flags(&colour(), &plain, None);
        assert_eq!(ruling.policy.timeout_secs, Some(30));
        assert!(ruling.policy.mark_skipped);
        assert_eq!(ruling.policy.decide(&colour()), None);
        assert_eq!(
            decided(&plain, Some("no window")),
            Some(Outcome::Unavailable { reason: "no window".into() })
        );
        let non_interactive = Flags { non_interactive: true, ..Flags::default() };
        assert_eq!(
            decided(&non_interactive, Some("no window")),
            Some(Outcome::Unavailable { reason: NON_INTERACTIVE.into() })
        );
    }
}
