//! The built-in experiments' verdicts: each seed document's claims, checked against torpor's
//! runs by a rule written beside the claim (a direction and a tolerance, bounded on both sides
//! where the seed gives a figure), never by a judgement made by hand.
//!
//! The runs themselves are scenarios like any other; whoever drives an experiment (the Python
//! package's `torpor reproduce`) runs them and hands their row tables here. What the seed
//! claims, the rule that decides it and the words that explain the verdict live in this layer,
//! so that every front end gives the same verdicts.

pub mod claim;
pub mod format;
pub mod row_lookup;

pub mod apst;
pub mod devfreq;
pub mod hpb;
pub mod qos;
pub mod teo;
