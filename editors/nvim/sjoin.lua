-- sjoin's language server in Neovim's built-in LSP client (Neovim 0.7 or newer, no plugin).
-- Put this in ~/.config/nvim/init.lua, or load it with `nvim -u sjoin.lua`; set SJOIN_PYTHON
-- to the Python that has sjoin installed (pip install 'sjoin[lsp]'), else python3 runs it.
vim.g.do_filetype_lua = 1 -- Neovim 0.7: vim.filetype.add needs it (the default from 0.8)
vim.filetype.add({ extension = { sjoin = "sjoin" } })

local sjoin = {
  name = "sjoin",
  cmd = { vim.env.SJOIN_PYTHON or "python3", "-m", "sjoin", "lsp" },
  init_options = { debounceMs = 150 },
}

vim.api.nvim_create_autocmd("FileType", {
  pattern = "sjoin",
  callback = function(args)
    local config = vim.tbl_extend("force", sjoin, {
      root_dir = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(args.buf), ":p:h"),
    })
    if vim.lsp.start then -- Neovim 0.8+: reuses the running server of the same root
      vim.lsp.start(config, { bufnr = args.buf })
    else -- Neovim 0.7 (Debian 12's)
      vim.lsp.buf_attach_client(args.buf, vim.lsp.start_client(config))
    end
  end,
})
