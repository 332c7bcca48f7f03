//! Which executor a test gets: the one its profile names. Apart from
//! `executor` (the seam every executor implements) so that the executors
//! import the seam and nothing imports them back but this.

use super::executor::{Executor, Executors};

/// The executor each profile names: external, built-in or WASM.
pub struct ProfileExecutors;

impl Executors for ProfileExecutors {
    fn executor<'a>(&'a self, test: &crate::expand::Test, env: &super::Env<'a>) -> Box<dyn Executor + 'a> {
        use crate::model::profile::ExecutorDef;
        let p = &test.profile.profile;
        match &p.executor {
            ExecutorDef::External(x) => {
                let extra = super::requirements::extra_path(p);
                let ext = super::external::External::new(x.clone(), env.servers).with_extra_path(env.path, extra);
                match env.sandbox.filter(|c| super::sandbox::applies(c.mode, &test.profile)) {
                    Some(cfg) => Box::new(ext.confined(cfg, test.profile.clone())),
                    None => Box::new(ext),
                }
            }
            ExecutorDef::Builtin(b) => {
                Box::new(super::builtin::Builtin::new(b.clone(), &p.id, p.requirements.free_space.clone()))
            }
            ExecutorDef::Wasm(w) => {
                let direct: Vec<String> = p
                    .results
                    .iter()
                    .filter(|r| !p.parsers.iter().any(|d| d.result == r.id))
                    .map(|r| r.id.clone())
                    .collect();
                Box::new(super::wasm::Wasm::new(test.profile.clone(), w.clone(), direct, env.plugins))
            }
        }
    }
}
