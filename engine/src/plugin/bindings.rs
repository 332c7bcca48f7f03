//! Generated bindings of `sdk/wit`: the workload and parser worlds, and
//! their shared types (`wit`). Apart from the host so that the interfaces
//! the host adds to its linker (`bulk`) need not import the host.

pub mod workload_world {
    wasmtime::component::bindgen!({ path: "../sdk/wit", world: "workload-plugin" });
}

pub mod parser_world {
    wasmtime::component::bindgen!({
        path: "../sdk/wit",
        world: "parser-plugin",
        // One host implementation serves both worlds.
        with: {
            "engine:plugin/host": super::workload_world::engine::plugin::host,
            "engine:plugin/types": super::workload_world::engine::plugin::types,
        },
    });
}

pub use workload_world::engine::plugin::types as wit;
