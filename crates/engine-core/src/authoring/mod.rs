//! Writing profiles: a scaffold from a command line ([`scaffold`]) and the
//! conversion of PTS test-profile folders ([`pts_import`]).

pub mod pts_import;
pub mod scaffold;
