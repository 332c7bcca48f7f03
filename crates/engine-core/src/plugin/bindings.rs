//! Generated bindings of `sdk/wit`: the workload and parser worlds, and
//! their shared types (`wit`). Apart from the host so that the interfaces
//! the host adds to its linker (`bulk`) need not import the host.

pub mod workload_world {
    // Exports are async: a call is a future that a deadline can drop while
    // the plugin waits in a host call (plugin::runtime::watched).
    wasmtime::component::bindgen!({ path: "../../sdk/wit", world: "workload-plugin", exports: { default: async } });
}

pub mod parser_world {
    wasmtime::component::bindgen!({
        path: "../../sdk/wit",
        world: "parser-plugin",
        exports: { default: async },
        // One host implementation serves both worlds.
        with: {
            "engine:plugin/host": super::workload_world::engine::plugin::host,
            "engine:plugin/types": super::workload_world::engine::plugin::types,
        },
    });
}

pub use workload_world::engine::plugin::types as wit;
