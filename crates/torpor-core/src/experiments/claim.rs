//! A seed's claim and its verdict, and how verdicts are summed up: the shape every
//! experiment's judgement shares.

use serde::{Deserialize, Serialize};

/// One claim of a seed document and torpor's verdict on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Claim {
    /// The seed document's number ("000").
    pub seed: String,
    /// The claim in words, with its rule.
    pub claim: String,
    /// What the seed says.
    pub seed_value: String,
    /// What torpor gives, or why the claim cannot be checked.
    pub torpor_value: String,
    /// `Some(true)` holds, `Some(false)` fails, `None` not checkable.
    pub ok: Option<bool>,
    /// Whether a number the rule reads was fitted to this seed's own figure: the verdict is
    /// then partly a calibration check, not a prediction.
    pub fitted: bool,
    /// The seed's figure that number was fitted to.
    pub fitted_to: Option<String>,
}

impl Claim {
    /// A claim whose rule reads nothing fitted to the seed.
    pub fn new(
        seed: &str,
        claim: impl Into<String>,
        seed_value: impl Into<String>,
        torpor_value: impl Into<String>,
        ok: Option<bool>,
    ) -> Self {
        Self {
            seed: seed.to_owned(),
            claim: claim.into(),
            seed_value: seed_value.into(),
            torpor_value: torpor_value.into(),
            ok,
            fitted: false,
            fitted_to: None,
        }
    }

    /// The same claim, its rule reading a number fitted to `figure` (the seed's own).
    pub fn fitted_to(self, figure: impl Into<String>) -> Self {
        Self {
            fitted: true,
            fitted_to: Some(figure.into()),
            ..self
        }
    }
}

/// A claim with its robustness: whether its verdict stands at every end of the ranges of the
/// assumptions torpor cannot check.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JudgedClaim {
    #[serde(flatten)]
    pub claim: Claim,
    /// `Some(true)`: holds at the central values and at every end it was evaluated at;
    /// `Some(false)`: fails at one of them; `None`: not checkable or not assessed.
    pub robust: Option<bool>,
    /// The ends at which the verdict differs from the central one, in words; `None` when
    /// none does.
    pub hinges_on: Option<String>,
    /// What the ends are (or why robustness was not assessed).
    pub robust_basis: String,
}

/// The claims evaluated at one end of an assumption's range, named as the verdicts quote it;
/// `None` for a claim that end cannot evaluate (its runs do not cover what the claim reads).
pub type End = (String, Vec<Option<Claim>>);

/// Each central claim with its robustness against `ends` (each in the central list's order).
/// A not-checkable claim stays not assessed; a claim is robust when it holds centrally and at
/// every end that evaluates it.
pub fn robustness(central: Vec<Claim>, ends: &[End], basis: &str) -> Vec<JudgedClaim> {
    central
        .into_iter()
        .enumerate()
        .map(|(i, claim)| {
            let Some(ok) = claim.ok else {
                return JudgedClaim {
                    claim,
                    robust: None,
                    hinges_on: None,
                    robust_basis: basis.to_owned(),
                };
            };
            let verdicts: Vec<(&str, Option<bool>)> = ends
                .iter()
                .filter_map(|(end, claims)| {
                    let at = claims.get(i)?.as_ref()?;
                    Some((end.as_str(), at.ok))
                })
                .collect();
            let robust = ok && verdicts.iter().all(|(_, v)| *v == Some(true));
            let flips: Vec<String> = verdicts
                .iter()
                .filter(|(_, v)| *v != Some(ok))
                .map(|(end, v)| format!("{} with {end}", holds_or_fails(*v == Some(true))))
                .collect();
            let hinges_on = (!flips.is_empty()).then(|| {
                format!(
                    "{} at the central values; {}",
                    holds_or_fails(ok),
                    flips.join("; ")
                )
            });
            JudgedClaim {
                claim,
                robust: Some(robust),
                hinges_on,
                robust_basis: basis.to_owned(),
            }
        })
        .collect()
}

fn holds_or_fails(holds: bool) -> &'static str {
    if holds {
        "holds"
    } else {
        "fails"
    }
}

/// The claims of an experiment that runs no alternative assumptions: robustness not
/// assessed, `reason` saying why.
pub fn not_assessed(claims: Vec<Claim>, reason: &str) -> Vec<JudgedClaim> {
    claims
        .into_iter()
        .map(|claim| JudgedClaim {
            claim,
            robust: None,
            hinges_on: None,
            robust_basis: reason.to_owned(),
        })
        .collect()
}

/// How many claims hold, fail and cannot be checked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct VerdictCounts {
    pub hold: usize,
    pub fail: usize,
    #[serde(rename = "not checkable")]
    pub not_checkable: usize,
}

impl VerdictCounts {
    /// The counts of the verdicts `oks` (`None`: not checkable).
    pub fn of(oks: impl IntoIterator<Item = Option<bool>>) -> Self {
        oks.into_iter().fold(Self::default(), |mut n, ok| {
            match ok {
                Some(true) => n.hold += 1,
                Some(false) => n.fail += 1,
                None => n.not_checkable += 1,
            }
            n
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(ok: Option<bool>) -> Claim {
        Claim::new("000", "c", "s", "t", ok)
    }

    #[test]
    fn a_claim_that_holds_everywhere_is_robust() {
        let ends = [("end a".to_owned(), vec![Some(claim(Some(true)))])];
        let judged = robustness(vec![claim(Some(true))], &ends, "basis");
        assert_eq!(judged[0].robust, Some(true));
        assert_eq!(judged[0].hinges_on, None);
        assert_eq!(judged[0].robust_basis, "basis");
    }

    #[test]
    fn the_ends_that_flip_a_verdict_are_named_in_order() {
        let ends = [
            ("low".to_owned(), vec![Some(claim(Some(false)))]),
            ("mid".to_owned(), vec![Some(claim(Some(true)))]),
            ("high".to_owned(), vec![Some(claim(Some(false)))]),
        ];
        let judged = robustness(vec![claim(Some(true))], &ends, "b");
        assert_eq!(judged[0].robust, Some(false));
        assert_eq!(
            judged[0].hinges_on.as_deref(),
            Some("holds at the central values; fails with low; fails with high")
        );
    }

    #[test]
    fn a_failing_claim_is_not_robust_even_where_no_end_flips_it() {
        let ends = [("low".to_owned(), vec![Some(claim(Some(false)))])];
        let judged = robustness(vec![claim(Some(false))], &ends, "b");
        assert_eq!(
            (judged[0].robust, judged[0].hinges_on.clone()),
            (Some(false), None)
        );
    }

    #[test]
    fn an_end_that_cannot_evaluate_a_claim_is_left_out() {
        let ends = [
            ("low".to_owned(), vec![None]),
            ("high".to_owned(), vec![Some(claim(Some(true)))]),
        ];
        let judged = robustness(vec![claim(Some(true))], &ends, "b");
        assert_eq!(judged[0].robust, Some(true));
    }

    #[test]
    fn a_not_checkable_claim_has_no_robustness() {
        let ends = [("low".to_owned(), vec![Some(claim(Some(true)))])];
        let judged = robustness(vec![claim(None)], &ends, "b");
        assert_eq!(
            (judged[0].robust, judged[0].hinges_on.clone()),
            (None, None)
        );
    }

    #[test]
    fn a_judged_claim_serializes_flat_in_the_results_order() {
        let judged = not_assessed(vec![claim(Some(true)).fitted_to("fig. 3")], "why");
        let text = serde_json::to_string(&judged[0]).unwrap();
        assert_eq!(
            text,
            r#"{"seed":"000","claim":"c","seed_value":"s","torpor_value":"t","ok":true,"fitted":true,"fitted_to":"fig. 3","robust":null,"hinges_on":null,"robust_basis":"why"}"#
        );
    }

    #[test]
    fn counts() {
        let n = VerdictCounts::of([Some(true), None, Some(false), Some(true)]);
        assert_eq!((n.hold, n.fail, n.not_checkable), (2, 1, 1));
        assert_eq!(
            serde_json::to_string(&n).unwrap(),
            r#"{"hold":2,"fail":1,"not checkable":1}"#
        );
    }
}
